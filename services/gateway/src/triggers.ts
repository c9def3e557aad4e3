import type { FastifyReply, FastifyRequest } from 'fastify';
import { capabilityByName, ops, triggerRefusal, type Capability } from '@vcs/contract';
import { callOp, type CallContext } from '@vcs/platform';
import { callerOf } from './dispatch.ts';
import type { GatewayDeps } from './deps.ts';
import { forgetIdempotency } from './idempotency.ts';
import { sameRequest, sendBlocked, sendOpReply } from './reply.ts';

/**
 * Which triggers a route lets through: those of the capability it runs (its catalog entry), any of the catalog's (a
 * platform route whose capability is decided behind it, a deal's step), or `route`: the route checks them itself once
 * it knows its capability (the settle route, by its intent's).
 */
export type Honours = Capability | 'catalog' | 'route';

const isLive = (req: FastifyRequest) => req.caller.kind === 'key' && req.caller.environment === 'live';

/** The request's `Sandbox-Trigger`, or null when it sends none (an empty header is none). */
export function triggerOf(req: FastifyRequest): string | null {
  const t = req.headers['sandbox-trigger'];
  return typeof t === 'string' && t.trim() ? t.trim() : null;
}

/**
 * Refuse the request's trigger unless `on` (the capability it runs; null: a route that does not know which, where any
 * trigger of the catalog passes) honours it for this caller: 400 `trigger-not-honoured`, naming the triggers that
 * are. Checked before any gate, payment or call, so a refused trigger runs nothing and moves nothing. True: refused.
 */
export function refuseTrigger(req: FastifyRequest, reply: FastifyReply, trigger: string, on: Capability | null) {
  const next = sameRequest(req);
  const refusal = triggerRefusal(trigger, on, isLive(req) ? 'live' : 'sandbox', next);
  if (!refusal) return false;
  forgetIdempotency(req); // sent again without the trigger, under the same Idempotency-Key, it runs
  void sendBlocked(reply, 'trigger-not-honoured', refusal.message, {
    trigger,
    ...(on ? { capability: on.name } : {}),
    honoured: refusal.honoured,
    triggers: '/catalog/triggers',
    next,
  });
  return true;
}

/**
 * The settle route's trigger, checked against its intent's capability: the intent is read (a read moves nothing)
 * before the settlement or payment is asked for. An intent that cannot be read answers as its settlement would (not
 * found, another account's). True: an answer was sent.
 */
export async function refuseIntentTrigger(
  deps: GatewayDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: CallContext,
  intentId: string,
): Promise<boolean> {
  if (!ctx.trigger) return false;
  if (isLive(req)) return refuseTrigger(req, reply, ctx.trigger, null); // no trigger applies: nothing to look up
  const intent = await callOp(callerOf(deps), ops.intentsGet, { intentId }, ctx);
  if (intent.answer.type !== 'OK') {
    sendOpReply(reply, intent);
    return true;
  }
  const c = capabilityByName(intent.answer.value.capability);
  return !!c && refuseTrigger(req, reply, ctx.trigger, c);
}
