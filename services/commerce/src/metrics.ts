import { Counter, Histogram } from 'prom-client';
import { lifecycles } from '@vcs/contract';
import { childrenOf, metricsRegistry } from '@vcs/platform';
import type { HTTPFacilitatorClient } from '@x402/core/server';
import { SettleError, VerifyError } from '@x402/core/types';

/**
 * Commerce's payment metrics, on the process's one registry (its /metrics: the embedded process's, or commerce's
 * HEALTH_PORT). The money code calls these where a payment reaches an outcome, and its facilitator client is timed here.
 */

/** The outcomes a paid call's payment is counted by (docs/operations.md, Metrics). */
export type PaymentOutcome = 'settled' | 'voided' | 'refused' | 'expired' | 'pending';

export const paymentsTotal = new Counter({
  name: 'vcs_payments_total',
  help:
    'x402 payments by outcome: settled (proven on chain), voided (held, its answer not worth its price: never sent), ' +
    'refused (by its terms, the facilitator at verify, or at settle before broadcasting), expired (unused on chain ' +
    'past validBefore), pending (its first settle had no clear answer and the chain had no transfer yet); each ' +
    'payment counted once per outcome',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});
const outcomes = childrenOf(paymentsTotal);
// Every outcome from the start, at 0: a rate or an alert on one reads 0, not nothing, before its first payment.
for (const outcome of ['settled', 'voided', 'refused', 'expired', 'pending'] as const)
  paymentsTotal.inc({ outcome }, 0);

export function countPayment(outcome: PaymentOutcome): void {
  outcomes({ outcome }).inc();
}

/** The states a stored payment ends in (the table's), each an outcome of the same name. */
const finalStates: readonly string[] = lifecycles.payment.final;

/**
 * A payment row a move of this request's just returned (undefined: the move did not happen here, someone else made
 * it): counted by the final state it reached, and handed back. Only the request whose conditional move wins gets a
 * row, so each payment is counted once however many retries, replicas or reconciler passes drive it.
 */
export function counted<R extends { status: string } | undefined>(row: R): R {
  if (row && finalStates.includes(row.status)) countPayment(row.status as PaymentOutcome);
  return row;
}

export const facilitatorDuration = new Histogram({
  name: 'vcs_facilitator_request_duration_seconds',
  help:
    'Requests to the x402 facilitator by operation (verify, settle) and outcome: ok (it said valid / settled), ' +
    'refused (it answered with a reason: invalid, not settled), error (no answer: time-out, connection, 5xx without ' +
    'a reason, an unreadable answer)',
  labelNames: ['operation', 'outcome'] as const,
  // OpenTelemetry's boundaries for an HTTP client's request duration: the gateway's request histogram's too.
  buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  registers: [metricsRegistry],
});
const facilitatorChild = childrenOf(facilitatorDuration);

/**
 * The facilitator client, each verify and settle timed by its outcome. Its answers and throws (x402's own types,
 * money/facilitator.ts) pass through unchanged.
 */
export function timedFacilitator(client: HTTPFacilitatorClient): HTTPFacilitatorClient {
  const timed =
    <A extends unknown[], T extends { isValid?: boolean; success?: boolean }>(
      operation: 'verify' | 'settle',
      send: (...args: A) => Promise<T>,
    ) =>
    async (...args: A): Promise<T> => {
      const start = performance.now();
      const observe = (outcome: 'ok' | 'refused' | 'error') =>
        facilitatorChild({ operation, outcome }).observe((performance.now() - start) / 1000);
      try {
        const answer = await send(...args);
        observe(answer.isValid === true || answer.success === true ? 'ok' : 'refused');
        return answer;
      } catch (e) {
        observe(e instanceof VerifyError || e instanceof SettleError ? 'refused' : 'error');
        throw e;
      }
    };
  client.verify = timed('verify', client.verify.bind(client));
  client.settle = timed('settle', client.settle.bind(client));
  return client;
}
