import type { FastifyReply } from 'fastify';
import { normaliseVin, vinProblem } from '@vcs/contract';
import { CATALOG, sendBlocked } from '../reply.ts';

/**
 * A path segment that should be a VIN. Anything that is not 17 characters is not a VIN at all (a typo'd
 * route): 404 not-found. Seventeen characters that break a VIN rule: 400 invalid-vin naming the rule.
 */
export function vinFromPath(raw: string, reply: FastifyReply, what: string): string | null {
  const vin = normaliseVin(raw); // fastify has decoded the segment once already; decoding again breaks on `%25zz`
  const p = vinProblem(vin);
  if (!p) return vin;
  if (p.rule === 'length') {
    sendBlocked(
      reply,
      'not-found',
      `no route ${what}: this segment is not a VIN (${p.message}); the catalog of routes is at GET /catalog`,
      { next: CATALOG },
    );
  } else {
    sendBlocked(reply, 'invalid-vin', `invalid VIN (${p.rule}): ${p.message}`, { ...p });
  }
  return null;
}
