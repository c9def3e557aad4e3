import type { FastifyRequest } from 'fastify';
import type { PaidCallMembers } from '@vcs/contract';
import { z } from 'zod';
import type { SentPayment } from './x402.ts';

/**
 * What a paid request's one log line says of its payment (app.ts `OneLinePerRequest`): the intent it pays, the
 * wallet that signed it, the payment's state once held (`refused` for one refused before it was held, null while it
 * was never held) and the transfer's transaction once it moved money.
 */
export interface PaymentLog {
  intentId: string | null;
  payer: string | null;
  paymentStatus: string | null;
  transaction: string | null;
}

const signedBy = z.object({ payload: z.object({ authorization: z.object({ from: z.string() }) }) });

export function paymentLogOf(payment: SentPayment, meta: PaidCallMembers | undefined): PaymentLog {
  return {
    intentId: meta?.intentId ?? payment.intentId,
    payer: meta?.receipt?.payer ?? signedBy.safeParse(payment.payload).data?.payload.authorization.from ?? null,
    paymentStatus: meta?.paymentStatus ?? (meta?.refusal ? 'refused' : null),
    transaction: meta?.receipt?.transaction ?? null,
  };
}

const logged = new WeakMap<FastifyRequest, PaymentLog>();
/** Remember the payment of the request answered with it, for its log line. */
export const notePayment = (req: FastifyRequest, log: PaymentLog) => void logged.set(req, log);
/** The payment a request's log line names, if it was a paid one. */
export const paymentLogFor = (req: FastifyRequest) => logged.get(req);
