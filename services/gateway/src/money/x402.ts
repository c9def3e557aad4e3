import type { OfferValue, Price } from '@vcs/contract';

// The sandbox mirrors each offer on Base Sepolia USDC (6 decimals) to a fixed sandbox address; nothing is
// collected on-chain: settlement happens through the intent (POST /intents/{id}/settle).
export const X402_SANDBOX = {
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  payTo: '0x0000000000000000000000000000000000000402',
  decimals: 6,
} as const;

const atomic = (amount: string) => {
  const [whole, frac = ''] = amount.split('.');
  return (BigInt(whole!) * 10n ** 6n + BigInt((frac + '000000').slice(0, 6))).toString();
};

/** The x402 v2 PaymentRequired for an OFFER: `exact` for flat prices, `upto` (the hard ceiling) for metered and take-rates. */
export function paymentRequiredOf(offer: OfferValue, price: Price, resourceUrl: string, description: string, now: Date) {
  const scheme = price.model === 'flat' ? 'exact' : 'upto';
  const seconds = Math.max(0, Math.round((new Date(offer.intent.expiresAt).getTime() - now.getTime()) / 1000));
  return {
    x402Version: 2,
    error: 'payment required: settle the intent (POST ' + offer.settle.path + ')',
    resource: { url: resourceUrl, description, mimeType: 'application/json' },
    accepts: [{
      scheme, network: X402_SANDBOX.network,
      amount: atomic(scheme === 'exact' ? offer.price.amount : offer.ceiling.amount),
      asset: X402_SANDBOX.asset, payTo: X402_SANDBOX.payTo, maxTimeoutSeconds: seconds,
      extra: { name: 'USDC', version: '2', intentId: offer.intent.id, settle: offer.settle, price: offer.price, ceiling: offer.ceiling },
    }],
  };
}

/**
 * The same offer for x402 v1 clients (the `x402`/`x402-fetch` 1.x packages), which read `x402Version` and `accepts`
 * from the 402 body: added beside the OFFER envelope's members, never in place of one. v1 knows one scheme,
 * `exact`, whose `maxAmountRequired` is the most the payment may be: the hard ceiling (the price, for flat prices).
 * No body-level `error`: `x402`'s own x402ResponseSchema allows only its facilitator reasons there, and the words
 * are in `value.message` already.
 */
export function paymentRequiredV1Of(offer: OfferValue, resourceUrl: string, description: string, now: Date) {
  const seconds = Math.max(0, Math.round((new Date(offer.intent.expiresAt).getTime() - now.getTime()) / 1000));
  return {
    x402Version: 1 as const,
    accepts: [{
      scheme: 'exact' as const, network: 'base-sepolia' as const, maxAmountRequired: atomic(offer.ceiling.amount),
      resource: resourceUrl, description, mimeType: 'application/json', payTo: X402_SANDBOX.payTo, maxTimeoutSeconds: seconds,
      asset: X402_SANDBOX.asset, extra: { name: 'USDC', version: '2', intentId: offer.intent.id, settle: offer.settle, price: offer.price, ceiling: offer.ceiling },
    }],
  };
}

export const encodeHeader = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');
