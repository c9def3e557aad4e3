import { blocked, capabilityByName, requestText, statusOfCode as statusOf, type BlockedCode, type Capability, type NextRequest, type OpReply } from '@vcs/contract';
import { busCallerOf, callCapability, provenanceOf, recordAnswer, type CallContext, type Services, type Unavailable } from '@vcs/platform';


export function refusal(services: Services, ctx: Pick<CallContext, 'environment'>, code: BlockedCode, message: string, extra: Record<string, unknown> = {}): OpReply {
  const a = blocked(code, message, extra, provenanceOf(ctx, services));
  return { status: statusOf(code), answer: a as unknown as Record<string, unknown> };
}

/** A plain OK record answer (an intent's or a handoff's state). */
export function record(services: Services, ctx: Pick<CallContext, 'environment'>, answers: string, value: Record<string, unknown>): OpReply {
  return { status: 200, answer: recordAnswer(services, ctx, answers, value) };
}

export interface Execution extends OpReply { unavailable?: Unavailable }

/**
 * Run a capability for real (ctx.settled) by sending its request to its pillar over the bus, exactly as the
 * gateway would. `no-responders` or `closed` means it certainly did not run; a time-out means it may have.
 * `retry` is the request that runs it again (the settlement or the handoff's completion), named when it did not run.
 */
export async function execute(services: Services, c: Capability, input: unknown, ctx: CallContext, timeoutMs: number, retry: NextRequest): Promise<Execution> {
  const r = await callCapability(busCallerOf(services), c, input, ctx, timeoutMs);
  if (!r.unavailable) return r;
  const a = blocked('pillar-unavailable', `the ${c.pillar} pillar did not run ${c.name} (${r.unavailable}); retry with ${requestText(retry)} shortly`, { pillar: c.pillar, reason: r.unavailable, next: retry });
  return { status: 503, answer: a as unknown as Record<string, unknown>, unavailable: r.unavailable };
}

export function offerCapability(name: unknown): Capability | undefined {
  return typeof name === 'string' ? capabilityByName(name) : undefined;
}

export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
export const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
