import type { CommerceServices as Services } from '../../config.ts';
import { Refused } from '../common.ts';
import { paymentPending, paymentRefusal, railOf, requirementFor, verifyOnce } from '../payments.ts';
import { refusalOf, type Offer } from './offered.ts';
import { Raced, type Presented } from './paying.ts';

/**
 * 5. The facilitator would settle it (x402's /verify: the signature, the funds, the nonce unused, the validity
 * window); nothing moves. Its requirement, in the payment's own version's form, is what will be settled. A refusal
 * may be a copy of this payment bound (and settled) meanwhile, which is what the facilitator saw: the entry decides
 * (`Raced`).
 */
export async function verified(services: Services, pr: Presented, offer: Offer): Promise<Record<string, unknown>> {
  const requirements = requirementFor(railOf(services), offer.terms, pr.p.x402Version);
  const v = await verifyOnce(services, pr.key.join(':').toLowerCase(), pr.p, requirements);
  if (v.kind === 'refused')
    throw new Raced(
      new Refused(paymentRefusal(services, pr.req.ctx, offer.terms, v.refusal), {
        intentId: offer.terms.id,
        refusal: refusalOf(offer.terms, v.refusal.x402Error),
      }),
    );
  if (v.kind === 'unavailable')
    throw new Raced(
      new Refused(paymentPending(offer.terms, 'payment-unavailable', v.message, 2), { intentId: offer.terms.id }),
    );
  return requirements;
}
