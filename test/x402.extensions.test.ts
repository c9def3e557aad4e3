import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayment, type Rail } from '@vcs/x402-rail';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec } from '@x402/extensions/bazaar';
import {
  decodeSignedOffers,
  extractJWSHeader,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  findAcceptsObjectFromSignedOffer,
  verifyOfferSignatureJWS,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureJWS,
  type JWSSignedOffer,
} from '@x402/extensions/offer-receipt';
import { call, modes } from './support/harness.ts';
import { type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// The 402's x402 extensions (docs/money.md, "What an indexer sees"): bazaar discovery from the catalog, offers signed
// with X402_RECEIPT_SIGNING_KEY, and the paid answer's signed receipt, each checked with @x402/extensions' own
// validation and verification (offline: the key is in the did:jwk key id), against the local chain.
const VIN = '1HGCM82633A004352';
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

describe.each(modes())('x402 extensions: discovery, signed offers and receipts (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 3, {
      X402_RECEIPT_SIGNING_KEY: randomBytes(32).toString('base64'),
    }));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  const offer = async () => {
    const r = await call(base, 'POST', '/signings/quote', { body: { vin: VIN } });
    expect(r.status, r.text).toBe(402);
    return { r, required: unb64(r.headers.get('payment-required')!) };
  };

  it("declares bazaar: signing.quote's JSON body (vin) and its answer, as @x402/extensions' validation accepts", async () => {
    const { r, required } = await offer();
    const bazaar = required.extensions.bazaar;
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true });
    expect(bazaar.info.input).toEqual({ type: 'http', method: 'POST', bodyType: 'json', body: { vin: VIN } });
    const input = bazaar.schema.properties.input.properties;
    expect(input.method.enum).toEqual(['POST']);
    expect(input.body).toMatchObject({ type: 'object', properties: { vin: { type: 'string' } } });
    const output = bazaar.schema.properties.output.properties.example;
    expect(output.properties.answers).toEqual({ const: 'SigningQuote@1' });
    expect(output.properties.value.required).toEqual(expect.arrayContaining(['fee', 'payer']));
    expect(bazaar.info.output).toMatchObject({ type: 'json', example: { type: 'OK', answers: 'SigningQuote@1' } });
    // The body's x402 (what the SDK and MCP read) is the same PaymentRequired, extensions and all.
    // The body carries the terms; the extensions are in PAYMENT-REQUIRED only (an agent reads the body).
    const { extensions: _header, ...terms } = required;
    expect(r.json.value.x402).toEqual(terms);
  });

  it('signs the offer: it verifies offline and names what accepts[0] asks; a tampered one does not verify', async () => {
    const { required } = await offer();
    const offers = extractOffersFromPaymentRequired(required);
    expect(offers).toHaveLength(1);
    const signed = offers[0] as JWSSignedOffer;
    expect(signed.format).toBe('jws');
    expect(extractJWSHeader(signed.signature)).toMatchObject({ alg: 'EdDSA', kid: expect.stringMatching(/^did:jwk:/) });
    const payload = await verifyOfferSignatureJWS(signed); // the key from the kid: no network
    expect(payload).toMatchObject({
      version: 1,
      resourceUrl: required.resource.url,
      scheme: 'exact',
      network: rail.network,
      asset: rail.asset,
      payTo: rail.payTo,
      amount: required.accepts[0].amount,
    });
    expect(payload.validUntil).toBeGreaterThan(Date.now() / 1000);
    expect(findAcceptsObjectFromSignedOffer(signed, required.accepts)).toEqual(required.accepts[0]);
    const [header, body, signature] = signed.signature.split('.');
    const cheaper = Buffer.from(JSON.stringify({ ...payload, amount: '1' })).toString('base64url');
    expect(body).not.toBe(cheaper);
    await expect(
      verifyOfferSignatureJWS({ ...signed, signature: `${header}.${cheaper}.${signature}` }),
    ).rejects.toThrow();
  });

  it('a paid call returns a signed receipt that verifies and matches its offer, its payer and its transaction', async () => {
    const { required } = await offer();
    const payment = await createPayment(rail.payerKeys[0]!, required.accepts[0], required.resource);
    const paid = await call(base, 'POST', '/signings/quote', {
      body: { vin: VIN },
      headers: { 'payment-signature': b64(payment) },
    });
    expect(paid.status, paid.text).toBe(200);
    const receipt = extractReceiptFromResponse(new Response(null, { headers: paid.headers }))!;
    expect(receipt?.format).toBe('jws');
    if (receipt.format !== 'jws') return;
    const settled = unb64(paid.headers.get('payment-response')!);
    const p = paid.json.meter.payment;
    const verified = await verifyReceiptSignatureJWS(receipt);
    expect(verified).toMatchObject({
      version: 1,
      resourceUrl: required.resource.url,
      network: rail.network,
      payer: rail.payerAddresses[0],
      transaction: settled.transaction,
    });
    expect(verified.transaction).toBe(p.transaction);
    expect(verified.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // Signed by the key that signed the offer, and about what the offer named.
    const [decoded] = decodeSignedOffers(extractOffersFromPaymentRequired(required));
    expect(extractJWSHeader(receipt.signature).kid).toBe(extractJWSHeader(decoded!.signedOffer.signature).kid);
    expect(verifyReceiptMatchesOffer(receipt, decoded!, [rail.payerAddresses[0]!])).toBe(true);
    expect({ network: p.network, asset: p.asset, payTo: p.payTo }).toEqual({
      network: decoded!.network,
      asset: decoded!.asset,
      payTo: decoded!.payTo,
    });
    expect(String(Math.round(Number(p.amount) * 1e6))).toBe(decoded!.amount);
    // The answer's meter carries the same signed receipt.
    expect(p.signedReceipt).toEqual(receipt);
  });

  it('the 402 of a refused payment declares the same extensions, with its offer signed afresh', async () => {
    const { required } = await offer();
    const short = { ...required.accepts[0], amount: String(BigInt(required.accepts[0].amount) - 1n) };
    const payment = await createPayment(rail.payerKeys[1]!, short, required.resource);
    const refused = await call(base, 'POST', '/signings/quote', {
      body: { vin: VIN },
      headers: { 'payment-signature': b64(payment) },
    });
    expect(refused.status, refused.text).toBe(402);
    const again = unb64(refused.headers.get('payment-required')!);
    expect(again.error).toBeTruthy();
    expect(again.extensions.bazaar).toEqual(required.extensions.bazaar);
    const [signed] = extractOffersFromPaymentRequired(again);
    await expect(verifyOfferSignatureJWS(signed as JWSSignedOffer)).resolves.toMatchObject({
      amount: required.accepts[0].amount,
      payTo: rail.payTo,
    });
  });
});
