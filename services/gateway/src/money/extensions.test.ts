import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { capabilities } from '@vcs/contract';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import { verifyOfferSignatureJWS, verifyReceiptSignatureJWS, type SignedOffer } from '@x402/extensions/offer-receipt';
import { bazaarOf, extensionsOf, receiptSignerOf, signReceipt } from './extensions.ts';

/** A 402's PaymentRequired before its extensions. */
const REQUIRED = {
  x402Version: 2,
  resource: { url: 'http://127.0.0.1/signings/quote' },
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:84532',
      amount: '1000000',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payTo: '0x0000000000000000000000000000000000000402',
      maxTimeoutSeconds: 900,
      extra: {} as Record<string, unknown>,
    },
  ],
};

/** The same offer's terms as the library's issuer takes them: `accepts[0]` and its index, no more. */
const { maxTimeoutSeconds: _life, extra: _extra, ...signedTerms } = REQUIRED.accepts[0]!;
const OFFER = { acceptIndex: 0, ...signedTerms };

describe('x402 extensions', () => {
  it("every offered capability's bazaar declaration passes @x402/extensions' own validation", () => {
    const offered = capabilities.filter((c) => c.gate === 'offer');
    expect(offered.length).toBeGreaterThan(0);
    for (const c of offered) {
      const ext = bazaarOf(c) as never;
      expect(validateDiscoveryExtension(ext), c.name).toEqual({ valid: true });
      expect(validateDiscoveryExtensionSpec(ext), c.name).toEqual({ valid: true });
    }
  });

  it('without a signer a 402 declares no signed offers (the distributed mode with no X402_RECEIPT_SIGNING_KEY)', async () => {
    const c = capabilities.find((x) => x.name === 'signing.quote')!;
    expect(Object.keys(await extensionsOf(c, REQUIRED, null))).toEqual([
      'bazaar',
      'payment-identifier',
      'sign-in-with-x',
    ]);
    const signer = receiptSignerOf(undefined, { embedded: true });
    expect(Object.keys(await extensionsOf(c, REQUIRED, signer))).toEqual([
      'bazaar',
      'payment-identifier',
      'sign-in-with-x',
      'offer-receipt',
    ]);
  });

  it('signs with X402_RECEIPT_SIGNING_KEY, the dev-only key only where allowed, and verifies offline', async () => {
    expect(receiptSignerOf(undefined, { embedded: false })).toBeNull();
    const dev = receiptSignerOf(undefined, { embedded: true })!;
    expect(dev.devOnly).toBe(true);
    const key = randomBytes(32).toString('base64');
    const signer = receiptSignerOf(key, { embedded: false })!;
    expect(signer.devOnly).toBe(false);
    expect(signer.kid).toMatch(/^did:jwk:/);
    expect(signer.kid).not.toBe(dev.kid);
    expect(receiptSignerOf(key, { embedded: true })!.kid).toBe(signer.kid); // the key, not the mode, names it
    const receipt = await signReceipt(signer, {
      resourceUrl: 'http://127.0.0.1/signings/quote',
      payer: '0x0000000000000000000000000000000000000001',
      network: 'eip155:84532',
      transaction: '0xabc',
    });
    expect(receipt.format).toBe('jws');
    if (receipt.format !== 'jws') return;
    await expect(verifyReceiptSignatureJWS(receipt)).resolves.toMatchObject({ transaction: '0xabc', version: 1 });
    const offer = await signer.issuer.issueOffer('http://127.0.0.1/signings/quote', OFFER);
    if (offer.format !== 'jws') throw new Error('expected a JWS offer');
    await expect(verifyOfferSignatureJWS(offer)).resolves.toMatchObject({ amount: '1000000' });
  });

  it("a 402's signed offers: one second's are the same for the same terms and URL, each verifies, the intent is never in them", async () => {
    const c = capabilities.find((x) => x.name === 'signing.quote')!;
    const signer = receiptSignerOf(randomBytes(32).toString('base64'), { embedded: false })!;
    const offersOf = async (r: typeof REQUIRED) => {
      const info = ((await extensionsOf(c, r, signer))['offer-receipt'] as { info: { offers: SignedOffer[] } }).info;
      const offer = info.offers[0]!;
      if (offer.format !== 'jws') throw new Error('expected a JWS offer');
      return offer;
    };
    type JwsOffer = Awaited<ReturnType<typeof offersOf>>;
    const forIntent = (intentId: string, amount = '1000000') => ({
      ...REQUIRED,
      accepts: [{ ...REQUIRED.accepts[0]!, amount, extra: { intentId } }],
    });
    // Two 402s in one second (validUntil is whole seconds): taken again at a second's start if they fell across one.
    const inOneSecond = async (): Promise<readonly [JwsOffer, JwsOffer]> => {
      const second = Math.floor(Date.now() / 1000);
      const pair = [await offersOf(forIntent('pi_a')), await offersOf(forIntent('pi_b'))] as const;
      return Math.floor(Date.now() / 1000) === second ? pair : inOneSecond();
    };
    const [a, b] = await inOneSecond();
    expect(b).toEqual(a);
    await expect(verifyOfferSignatureJWS(b)).resolves.toMatchObject({
      amount: '1000000',
      resourceUrl: REQUIRED.resource.url,
    });
    const dearer = await offersOf(forIntent('pi_c', '2000000'));
    const elsewhere = await offersOf({ ...forIntent('pi_d'), resource: { url: 'http://127.0.0.2/signings/quote' } });
    expect(dearer.signature).not.toBe(a.signature);
    expect(elsewhere.signature).not.toBe(a.signature);
    await expect(verifyOfferSignatureJWS(dearer)).resolves.toMatchObject({ amount: '2000000' });
    await expect(verifyOfferSignatureJWS(elsewhere)).resolves.toMatchObject({
      resourceUrl: 'http://127.0.0.2/signings/quote',
    });
  });
});
