import {
  blockedReply,
  capabilityByName,
  type Blocked,
  type BlockedCode,
  type Capability,
  type Ok,
  type OpReply,
} from '@vcs/contract';
import { provenanceOf, recordAnswer, type CallContext, type Services } from '@vcs/platform';

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
export const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
