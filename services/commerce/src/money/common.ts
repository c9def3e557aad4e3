import {
  blockedReply,
  capabilityByName,
  type Blocked,
  type BlockedCode,
  type Capability,
  type Ok,
  type OpReply,
  type PaidCallMembers,
} from '@vcs/contract';
import { provenanceOf, recordAnswer, type CallContext, type Services } from '@vcs/platform';

/**
 * A refusal thrown from any step of a request (a paid call, a settlement) and answered once, where the request is
 * taken (`answered`, or the paid call's own catch, which adds what a paid call carries beside its answer): its reply,
 * and for a payment refused for good, x402's reason with the capability whose offer to sign again.
 */
export class Refused extends Error {
  constructor(
    readonly reply: OpReply<Blocked, never>,
    readonly members: Partial<PaidCallMembers> = {},
  ) {
    super(`${reply.answer.value.code}: ${reply.answer.value.message}`);
    this.name = 'Refused';
  }
}

/** Throw the refusal `refusal(...)` makes. */
export function refuse(...args: Parameters<typeof refusal>): never {
  throw new Refused(refusal(...args));
}

/** Run a request's steps; a step's thrown refusal is its answer (the one place refusals are mapped). */
export async function answered<R>(steps: () => Promise<R>): Promise<R | Refused['reply']> {
  try {
    return await steps();
  } catch (e) {
    if (e instanceof Refused) return e.reply;
    throw e;
  }
}

export function refusal(
  services: Services,
  ctx: Pick<CallContext, 'environment'>,
  code: BlockedCode,
  message: string,
  extra: Record<string, unknown> = {},
): OpReply<Blocked, never> {
  return blockedReply(code, message, extra, provenanceOf(ctx, services));
}

/** A plain OK record answer (an intent's or a handoff's state). */
export function record<V extends Record<string, unknown>>(
  services: Services,
  ctx: Pick<CallContext, 'environment'>,
  answers: string,
  value: V,
): OpReply<Ok<V>, never> {
  return { status: 200, answer: recordAnswer(services, ctx, answers, value) };
}

export function offerCapability(name: unknown): Capability | undefined {
  return typeof name === 'string' ? capabilityByName(name) : undefined;
}

export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
