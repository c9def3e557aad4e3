import type { Clock } from './clock.ts';

/**
 * The one lease, for every claim on the money's records (an execution, a payment, a deal step): a claim outlives
 * the call it covers by a margin, and is held while the injected clock is before its end — the rule itself, which
 * states a record under a lease is in and when it has run out, is the table's (contract lifecycles.ts `claimOf`,
 * `leaseRunOut`). No other time rule decides who may take a record up.
 */
export const LEASE_MARGIN_MS = 2_000;

/** The end of a lease taken now for a call of `callMs`. */
export const leaseUntil = (clock: Clock, callMs: number): Date =>
  new Date(clock.now().getTime() + callMs + LEASE_MARGIN_MS);

/** Whole seconds until a lease ends, at least 1: what a caller told to come back is given as Retry-After. */
export const leaseSecondsLeft = (clock: Clock, until: string | Date | null | undefined): number =>
  Math.max(1, Math.ceil(((until ? new Date(until).getTime() : 0) - clock.now().getTime()) / 1000));
