import { isFinal } from '@vcs/contract';
import type { CommerceServices as Services } from '../../config.ts';
import { isProven, railOf, signedBy } from '../payments.ts';
import { payingOf, type PaymentWithIntent } from './looked.ts';
import type { Paying, Presented } from './paying.ts';

/**
 * 3. An answer this wallet paid for, for this capability and this input, that never reached it (its caller was told
 * 503 and went away): answered now, with nothing charged for the new authorization — which is never bound, nor sent.
 * The new authorization must be signed by that wallet (checked offline, EIP-712): no one else reads what it paid for.
 */
export async function owed(
  services: Services,
  pr: Presented,
  debt: PaymentWithIntent | undefined,
): Promise<Paying | null> {
  if (!debt || !(await signedBy(railOf(services), pr.p))) return null;
  return payingOf(debt);
}

/** A payment whose intent ended without its answer (the payment refused or expired unused): nothing was paid. */
export const withheld = (p: Paying) => !p.pending && isFinal('intent', p.intent.status) && !isProven(p.payment);
