import { problemsOf, mandate as mandateSchema, toCents, type Mandate, type Problem } from '@vcs/contract';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../auth.ts';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);

/**
 * `Accept-Price: 5.00 USD` — the most the caller will pay for this call. When the capability's hard ceiling is
 * within it the call settles at once (one round trip); otherwise the 402 OFFER stands.
 */
export function acceptPrice(req: FastifyRequest): { cents: number; currency: string; text: string } | null | 'invalid' {
  const raw = one(req.headers['accept-price']);
  if (raw === undefined) return null;
  const m = /^\s*(\d{1,9}(?:\.\d{1,2})?)\s+([A-Z]{3})\s*$/.exec(raw);
  if (!m) return 'invalid';
  return { cents: toCents(m[1]!)!, currency: m[2]!, text: `${m[1]} ${m[2]}` };
}

/** `Mandate: <base64url of the Mandate JSON>`; absent → null, malformed → the problems to fix. */
export function mandateOf(req: FastifyRequest): { mandate: Mandate } | { problems: Problem[] } | null {
  const raw = one(req.headers.mandate);
  if (raw === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw.trim(), 'base64url').toString('utf8'));
  } catch {
    return { problems: [{ field: '(header Mandate)', message: 'not base64url-encoded JSON' }] };
  }
  const m = mandateSchema.safeParse(parsed);
  if (!m.success) return { problems: problemsOf(m.error.issues, 'header') };
  return { mandate: m.data };
}

/** A call is delegated when it says for whom (`Delegated-For: <principal>`) or its key is bound to a mandate. */
export function isDelegated(req: FastifyRequest, caller: Caller): boolean {
  const d = one(req.headers['delegated-for']);
  return (typeof d === 'string' && d.trim().length > 0) || (caller.kind === 'key' && caller.mandateBinding !== 'none');
}
