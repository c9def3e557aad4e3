import type { Capability } from '@vcs/contract';
import { sendCapability, type BusCaller, type CallContext, type CallResult, type Bus } from '@vcs/platform';
import type { GatewayDeps } from './deps.ts';

/**
 * Send one capability call to its pillar and return the pillar's bytes untouched (no re-parse on the hot path).
 * The transport rules (one retry for reads, a typed 503 for an absent or silent pillar) are platform's
 * `sendCapability`.
 */
export function dispatch(
  bus: Bus,
  c: Pick<Capability, 'subject' | 'pillar' | 'method'>,
  input: unknown,
  ctx: CallContext,
  timeoutMs: number,
): Promise<CallResult> {
  return sendCapability(bus, c, input, ctx, timeoutMs);
}

/** The gateway as a caller of platform operations: its bus, its clock, its BUS_TIMEOUT_MS. */
export const callerOf = (deps: Pick<GatewayDeps, 'bus' | 'clock' | 'config'>): BusCaller => ({
  bus: deps.bus,
  clock: deps.clock,
  busTimeoutMs: deps.config.busTimeoutMs,
});
