import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import { siwxChallenge } from './siwx.ts';

/**
 * The x402 extensions every 402 declares (its PaymentRequired's `extensions`), each made by @x402/extensions' own
 * helpers: `payment-identifier` (optional: a client may name its payment, to read a lost answer again) and
 * `sign-in-with-x` (the wallet that paid reads its answer again without paying).
 */
export async function agentExtensions(origin: string, resourceUrl: string, network: string) {
  return {
    [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    [SIGN_IN_WITH_X]: await siwxChallenge(origin, resourceUrl, network),
  };
}
