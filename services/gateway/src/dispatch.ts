import type { Capability } from '@vcs/contract';
import { call, type CallContext, type CallResult, type Bus } from '@vcs/platform';

/**
 * Send one capability call to its pillar and return the pillar's bytes untouched (no re-parse on the hot path).
 * The transport rules (one retry for reads, a typed 503 for an absent or silent pillar) are platform's `call`.
 */
export function dispatch(bus: Bus, c: Pick<Capability, 'subject' | 'pillar' | 'method'>, input: unknown, ctx: CallContext, timeoutMs: number): Promise<CallResult> {
  return call(bus, c.subject, c.pillar, { input, ctx }, { timeoutMs, idempotent: c.method === 'GET' });
}
