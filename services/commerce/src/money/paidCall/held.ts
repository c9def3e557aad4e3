import type { Blocked, OpReply } from '@vcs/contract';
import { storedPaying } from './looked.ts';
import type { Paying, Run } from './paying.ts';

/** The answers that mean the outcome is being decided: the same payment, driven on, reaches it. */
const stillDeciding = new Set(['payment-pending', 'execution-pending', 'idempotency-in-flight']);
const deciding = (pending: OpReply<Blocked, never> | undefined): pending is OpReply<Blocked, never> =>
  !!pending && stillDeciding.has(pending.answer.value.code);

/**
 * 8½. Held while its outcome is decided: a paid request whose capability is still running, or whose settlement is in
 * doubt, is answered when the outcome is known, within the hold its caller gave (the gateway's X402_PAYMENT_HOLD_MS,
 * `run.holdUntil`) — a stock x402 client waits that long and does not resend. Steps 7–8 are taken again from where the
 * intent is (`again`: its execution waited on, its payment asked of the chain), at the pace the 503 would have told
 * the caller (its Retry-After, at most a second); never from the first step.
 */
export async function held(run: Run, p: Paying, again: (run: Run, p: Paying) => Promise<Paying>): Promise<Paying> {
  const { clock } = run.services;
  while (deciding(p.pending)) {
    const left = (run.holdUntil ?? 0) - clock.now().getTime();
    if (left <= 0) return p;
    const retryAfter = Number(p.pending.answer.value.retryAfter ?? 1);
    await clock.sleep(Math.min(1000, retryAfter * 1000, left));
    // As stored now (another attempt, the reconciler, may have moved it meanwhile).
    const now = await storedPaying(run.services.db, p.payment.id);
    p = await again(run, { ...(now ?? p), pending: undefined, bound: p.bound, executionId: p.executionId });
  }
  return p;
}
