import { blocked, capabilityByName, FREE_METER, statusOfCode as statusOf, type BlockedCode, type Capability } from '@vcs/contract';
import { BusError, requestJson, type CallContext, type Services } from '@vcs/platform';

/** What every money subject replies: the HTTP status the gateway should answer with, and the answer. */
export interface MoneyReply { status: number; answer: Record<string, unknown>; replayed?: boolean }

export const provenanceOf = (ctx: Pick<CallContext, 'environment'>, services: Services) =>
  ({ simulated: ctx.environment === 'sandbox', environment: ctx.environment, source: services.source });

export function refusal(services: Services, ctx: Pick<CallContext, 'environment'>, code: BlockedCode, message: string, extra: Record<string, unknown> = {}): MoneyReply {
  const a = blocked(code, message, extra, provenanceOf(ctx, services));
  return { status: statusOf(code), answer: a as unknown as Record<string, unknown> };
}

/** A plain OK record answer (an intent's or a handoff's state). */
export function record(services: Services, ctx: Pick<CallContext, 'environment'>, answers: string, value: Record<string, unknown>): MoneyReply {
  return { status: 200, answer: { type: 'OK', answers, value, evidence: value, provenance: provenanceOf(ctx, services), events: [], meter: FREE_METER } };
}

export interface Execution { status: number; answer: Record<string, unknown>; unavailable: 'no-responders' | 'timeout' | 'closed' | null }

/**
 * Run a capability for real (ctx.settled) by sending its request to its pillar over the bus, exactly as the
 * gateway would. `no-responders` means it certainly did not run; a time-out means it may have.
 */
export async function execute(services: Services, c: Capability, input: unknown, ctx: CallContext, timeoutMs: number): Promise<Execution> {
  try {
    const r = await requestJson<Record<string, unknown>>(services.bus, c.subject, { input, ctx }, { timeoutMs, requestId: ctx.requestId });
    return { status: r.status, answer: r.json, unavailable: null };
  } catch (err) {
    const why = err instanceof BusError ? err.code : 'timeout';
    const a = blocked('pillar-unavailable', `the ${c.pillar} pillar did not run ${c.name} (${why}); retry the settlement shortly`, { pillar: c.pillar, reason: why });
    return { status: 503, answer: a as unknown as Record<string, unknown>, unavailable: why };
  }
}

export function offerCapability(name: unknown): Capability | undefined {
  return typeof name === 'string' ? capabilityByName(name) : undefined;
}

export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
export const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
