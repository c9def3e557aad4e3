import type { FastifyReply, FastifyRequest } from 'fastify';
import { MINT_KEY } from '@vcs/contract';
import { anonymousContext, type CallContext } from '@vcs/platform';
import type { GatewayConfig } from './deps.ts';
import { sendBlocked } from './reply.ts';
import { refuseTrigger, triggerOf, type Honours } from './triggers.ts';

/** The service's public origin for links and x402 resource URLs: PUBLIC_BASE_URL when set, else the request's own. */
export const publicBaseOf = (req: { protocol: string; host: string }, config: GatewayConfig) =>
  config.publicBaseUrl ?? `${req.protocol}://${req.host}`;

/**
 * What a route needs of the caller's key: `none` (the key is not looked at), `free` (any caller; a refused key earns
 * only a warning: a free face is never a lockout), `optional` (anonymous or a valid key), `required`.
 */
export type KeyNeed = 'none' | 'free' | 'optional' | 'required';

/**
 * The request's call context, built in one place from `req.caller` for every route that calls a pillar (capability
 * routes and platform operations): the account and key, the sandbox trigger, and the refusals a key or a trigger can
 * earn, with their one wording. `honours` says which triggers pass here (./triggers.ts). Null when a refusal was sent.
 */
export function requestContext(
  req: FastifyRequest,
  reply: FastifyReply,
  need: KeyNeed,
  what: string,
  honours: Honours = 'catalog',
): CallContext | null {
  const ctx = anonymousContext(req.id);
  if (need === 'none') return ctx;
  const { caller } = req;
  if (caller.kind === 'refused') {
    if (need !== 'free') {
      void sendBlocked(reply, caller.code, caller.message, { mint: MINT_KEY, next: caller.next });
      return null;
    }
    reply.header('warning', `199 - "${caller.code}: ${caller.message}"`);
  }
  if (caller.kind === 'anonymous' && need === 'required') {
    void sendBlocked(
      reply,
      'key-required',
      `${what} needs a key: send Authorization: Bearer <key> (or X-Api-Key). ` +
        'Mint one, free and anonymous, with POST /keys',
      { mint: MINT_KEY, next: MINT_KEY },
    );
    return null;
  }
  const trigger = triggerOf(req);
  if (
    trigger !== null &&
    honours !== 'route' &&
    refuseTrigger(req, reply, trigger, honours === 'catalog' ? null : honours)
  )
    return null;
  // A sandbox key selects the simulated mode even on live operations: the environment stays 'sandbox'.
  if (caller.kind === 'key') {
    ctx.account = caller.account;
    ctx.keyId = caller.keyId;
  }
  ctx.trigger = trigger;
  return ctx;
}
