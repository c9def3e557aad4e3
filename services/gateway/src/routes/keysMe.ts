import type { FastifyInstance } from 'fastify';
import { MINT_KEY, ops } from '@vcs/contract';
import { anonymousContext, callOp } from '@vcs/platform';
import { lookupKey } from '../keyCache.ts';
import type { GatewayDeps } from '../deps.ts';
import type { Meter, SettledUsage } from '../meter.ts';
import { sameRequest, sendBlocked } from '../reply.ts';

/** What commerce counted of the account's settlements (`usage.get`); null when it did not answer. */
async function settledUsage(deps: GatewayDeps, account: string, requestId: string): Promise<SettledUsage | null> {
  const r = await callOp(
    { bus: deps.bus, busTimeoutMs: deps.config.busTimeoutMs },
    ops.usageGet,
    { account },
    anonymousContext(requestId),
  ).catch(() => null);
  return r?.answer.type === 'OK' ? r.answer.value.byCapability : null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** GET /keys/me: the calling key's record and its account's usage so far. Never the secret. */
export async function keysMeRoute(app: FastifyInstance, deps: GatewayDeps, meter: Meter) {
  app.get('/keys/me', async (req, reply) => {
    const { caller } = req;
    if (caller.kind === 'refused')
      return sendBlocked(reply, caller.code, caller.message, { mint: MINT_KEY, next: caller.next });
    if (caller.kind === 'anonymous') {
      return sendBlocked(
        reply,
        'key-required',
        'GET /keys/me introspects the calling key: send Authorization: Bearer <key> (or X-Api-Key). ' +
          'Mint one with POST /keys',
        { mint: MINT_KEY, next: MINT_KEY },
      );
    }
    // Read the row fresh (not the gateway cache): introspection must show a rotation or scoping at once.
    const row = await lookupKey(deps.bus, caller.prefix, req.id, deps.config.busTimeoutMs).catch(() => null);
    const settled = row && (await settledUsage(deps, row.account_id, req.id));
    if (!row || !settled)
      return sendBlocked(
        reply,
        'pillar-unavailable',
        'the commerce pillar, which holds keys, is not answering; retry GET /keys/me shortly',
        { pillar: 'commerce', next: sameRequest(req) },
      );
    return reply.code(200).send({
      type: 'OK',
      id: row.id,
      prefix: row.prefix,
      account: row.account_id,
      environment: caller.environment,
      trustTier: row.trust_tier,
      scopes: row.scopes,
      mandateBinding: row.mandate_binding,
      status: row.status,
      createdAt: iso(row.created_at),
      lastRotatedAt: iso(row.last_rotated_at),
      expiresAt: iso(row.expires_at),
      graceUntil: iso(row.grace_until),
      supersededBy: row.superseded_by,
      usage: await meter.usage(row.account_id, settled),
    });
  });
}
