import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Capability } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import type { Caller } from './auth.ts';
import type { GatewayDeps } from './deps.ts';

/**
 * The offer and human gates. Each returns either an answer it has already sent (a 402 OFFER, a 403
 * NEEDS_HUMAN) or `execute` with the context to run the capability under (settled, mandate...).
 */
export type GateOutcome = { sent: true } | { sent: false; ctx: CallContext };
export type GateCheck = (
  c: Capability, input: Record<string, unknown>, caller: Caller, ctx: CallContext,
  req: FastifyRequest, reply: FastifyReply, deps: GatewayDeps,
) => Promise<GateOutcome>;

/** Foundation: every gate passes through. The money-and-people issue replaces these with intents and handoffs. */
export const passThroughGate: GateCheck = async (_c, _i, _caller, ctx) => ({ sent: false, ctx });
export const gates: { offer: GateCheck; human: GateCheck } = { offer: passThroughGate, human: passThroughGate };
