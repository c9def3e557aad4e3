import type { FastifyReply } from 'fastify';
import { normaliseVin, vinProblem } from '@vcs/contract';
import { sendMethodNotAllowed } from '../methods.ts';
import { CATALOG, sendBlocked } from '../reply.ts';

/**
 * A path segment that should be a VIN. A path another method serves (`GET /api-keys/mint`,
 * `GET /poas/secure-form-issue`) is 405. Else anything that is not 17 characters is not a VIN at all (a typo'd
 * route): 404 not-found; seventeen characters that break a VIN rule: 400 invalid-vin naming the rule.
 */
export function vinFromPath(raw: string, reply: FastifyReply, what: string): string | null {
  const vin = normaliseVin(raw); // fastify has decoded the segment once already; decoding again breaks on `%25zz`
  const p = vinProblem(vin);
  if (!p) return vin;
  const path = reply.request.url.split('?')[0]!;
  const allow = reply.server.allowedMethods(reply.request.method, path);
  if (allow.length) {
    sendMethodNotAllowed(reply, reply.request, path, allow);
  } else if (p.rule === 'length') {
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
