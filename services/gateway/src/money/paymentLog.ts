import { lifecycles, type PaidCallMembers } from '@vcs/contract';
import { z } from 'zod';
import type { SentPayment } from './x402.ts';

/**
 * What a paid request's one log line says of its payment (app.ts `OneLinePerRequest`): the intent it pays, the
 * wallet that signed it, its status in the words of `vcs_payments_total`'s outcomes — settled, voided, refused
 * (before it was held too), expired, or pending while it is held or being settled; null when it was never held and
 * not refused (the facilitator not answering, its intent busy) — and the transfer's transaction once it moved money.
 */
export interface PaymentLog {
  intentId: string | null;
  payer: string | null;
  paymentStatus: string | null;
  transaction: string | null;
}

const inFlight: readonly string[] = lifecycles.payment.inFlight;
function statusOf(meta: PaidCallMembers | undefined): string | null {
  if (!meta?.paymentStatus) return meta?.refusal ? 'refused' : null;
  return inFlight.includes(meta.paymentStatus) ? 'pending' : meta.paymentStatus;
}

const signedBy = z.object({ payload: z.object({ authorization: z.object({ from: z.string() }) }) });

export function paymentLogOf(payment: SentPayment, meta: PaidCallMembers | undefined): PaymentLog {
  return {
    intentId: meta?.intentId ?? payment.intentId,
    payer: meta?.receipt?.payer ?? signedBy.safeParse(payment.payload).data?.payload.authorization.from ?? null,
    paymentStatus: statusOf(meta),
    transaction: meta?.receipt?.transaction ?? null,
  };
}
