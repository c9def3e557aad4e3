import { createServer, type Server } from 'node:http';
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eip3009ABI } from '@x402/evm';
import { parseSignature } from 'viem';
import {
  createPayment,
  facilitatorSigner,
  payerKey,
  payingFetch,
  receiptOf,
  startRail,
  type Rail,
} from '@vcs/x402-rail';

/** The offline x402 rail (deploy/x402-rail): chain, token and facilitator, spoken to over HTTP as the service will. */
const AMOUNT = 10_000n; // $0.01 in USDC's 6 decimals
const PAYERS = 20;

type Authorization = { from: `0x${string}`; nonce: `0x${string}` };
const authorizationOf = (p: PaymentPayload) => p.payload.authorization as Authorization;

describe('x402 rail', () => {
  let rail: Rail;
  let facilitator: HTTPFacilitatorClient;
  beforeAll(async () => {
    rail = await startRail({ payers: PAYERS });
    facilitator = new HTTPFacilitatorClient({ url: rail.facilitatorUrl, timeoutMs: 5000 });
  });
  afterAll(async () => {
    await rail?.stop();
  });

  it('GET /supported lists exact on eip155:84532 (v2) and base-sepolia (v1), and the facilitator that signs', async () => {
    const r = await fetch(`${rail.facilitatorUrl}/supported`);
    expect(r.status).toBe(200);
    const supported = await r.json();
    expect(supported.kinds).toEqual([
      { x402Version: 2, scheme: 'exact', network: 'eip155:84532' },
      { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
    ]);
    expect(supported.signers['eip155:*']).toEqual([rail.facilitator.signer]);
    expect(await facilitator.getSupported()).toMatchObject({ kinds: supported.kinds });
  });

  it('verifies and settles a signed payment: the payee gains exactly the amount, the payer loses it', async () => {
    const requirements = rail.requirements(AMOUNT);
    const payment = await createPayment(rail.payerKeys[0], requirements);
    const [payTo0, payer0] = [await rail.balanceOf(rail.payTo), await rail.balanceOf(rail.payerAddresses[0])];
    expect(await facilitator.verify(payment, requirements)).toEqual({ isValid: true, payer: rail.payerAddresses[0] });
    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, network: 'eip155:84532', payer: rail.payerAddresses[0] });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await rail.balanceOf(rail.payTo)).toBe(payTo0 + AMOUNT);
    expect(await rail.balanceOf(rail.payerAddresses[0])).toBe(payer0 - AMOUNT);
    expect(await rail.authorizationUsed(rail.payerAddresses[0], authorizationOf(payment).nonce)).toBe(true);

    // The same payment again: refused at verify and at settle, and nothing moves.
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_nonce_already_used',
    });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_nonce_already_used',
      transaction: '',
    });
    expect(await rail.balanceOf(rail.payTo)).toBe(payTo0 + AMOUNT);
  });

  it(`settles ${PAYERS} payers at once, each in its own transaction (the facilitator's nonces never collide)`, async () => {
    const requirements = rail.requirements(AMOUNT);
    const payments = await Promise.all(rail.payerKeys.map((k) => createPayment(k, requirements)));
    const before = await rail.balanceOf(rail.payTo);
    const results = await Promise.all(payments.map((p) => facilitator.settle(p, requirements)));
    expect(results.map((r) => [r.success, r.errorReason])).toEqual(results.map(() => [true, undefined]));
    expect(new Set(results.map((r) => r.transaction)).size).toBe(PAYERS);
    expect(await rail.balanceOf(rail.payTo)).toBe(before + BigInt(PAYERS) * AMOUNT);
  });

  // The reasons the service maps to its error codes: a new @x402/evm that renames one fails here first.
  it.each([
    [
      'a bad signature',
      'invalid_exact_evm_signature',
      async () => {
        const requirements = rail.requirements(AMOUNT);
        const p = await createPayment(rail.payerKeys[1], requirements);
        const sig = p.payload.signature as string;
        return {
          p: {
            ...p,
            payload: { ...p.payload, signature: `${sig.slice(0, 10)}${sig[10] === 'a' ? 'b' : 'a'}${sig.slice(11)}` },
          },
          requirements,
        };
      },
    ],
    [
      'an amount other than the one asked',
      'invalid_exact_evm_payload_authorization_value_mismatch',
      async () => ({
        p: await createPayment(rail.payerKeys[1], rail.requirements(AMOUNT)),
        requirements: rail.requirements(2n * AMOUNT),
      }),
    ],
    [
      'an empty wallet',
      'invalid_exact_evm_insufficient_balance',
      async () => ({
        p: await createPayment(payerKey(999), rail.requirements(AMOUNT)),
        requirements: rail.requirements(AMOUNT),
      }),
    ],
    [
      'an authorization that expires (validBefore under now + 6 s)',
      'invalid_exact_evm_payload_authorization_valid_before',
      async () => {
        const requirements = { ...rail.requirements(AMOUNT), maxTimeoutSeconds: 1 };
        return { p: await createPayment(rail.payerKeys[1], requirements), requirements };
      },
    ],
  ] as const)('refuses %s: %s at verify and settle', async (_what, reason, make) => {
    const { p, requirements } = await make();
    const before = await rail.balanceOf(rail.payTo);
    expect(await facilitator.verify(p, requirements)).toMatchObject({ isValid: false, invalidReason: reason });
    expect(await facilitator.settle(p, requirements)).toMatchObject({
      success: false,
      errorReason: reason,
      transaction: '',
    });
    expect(await rail.balanceOf(rail.payTo)).toBe(before);
  });

  it('loses a settle answer after the transfer is on chain; the retry reads nonce already used', async () => {
    const requirements = rail.requirements(AMOUNT);
    const payment = await createPayment(rail.payerKeys[2], requirements);
    const before = await rail.balanceOf(rail.payTo);
    const lost = rail.facilitator.loseNextSettleAnswer();
    await expect(facilitator.settle(payment, requirements)).rejects.toThrow(/fetch failed/);
    expect(await lost).toMatchObject({ success: true, payer: rail.payerAddresses[2] });
    expect(await rail.balanceOf(rail.payTo)).toBe(before + AMOUNT);
    expect(await rail.authorizationUsed(rail.payerAddresses[2], authorizationOf(payment).nonce)).toBe(true);
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_nonce_already_used',
    });
    expect(await rail.balanceOf(rail.payTo)).toBe(before + AMOUNT);
    expect(rail.facilitator.stats().lost).toBe(1);
  });

  it('pauses: held requests wait and are served on resume; refused ones fail to connect; unavailable ones get 503', async () => {
    const requirements = rail.requirements(AMOUNT);
    const payment = await createPayment(rail.payerKeys[3], requirements);

    await rail.facilitator.pause('held');
    let answered = false;
    const held = facilitator.verify(payment, requirements).finally(() => {
      answered = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    await rail.facilitator.resume();
    expect(await held).toMatchObject({ isValid: true });

    await rail.setFacilitatorDown(true);
    await expect(fetch(`${rail.facilitatorUrl}/supported`)).rejects.toThrow(/fetch failed/);
    await rail.setFacilitatorDown(false);
    expect((await fetch(`${rail.facilitatorUrl}/supported`)).status).toBe(200);

    await rail.facilitator.pause('unavailable');
    await expect(facilitator.verify(payment, requirements)).rejects.toThrow(/\(503\)/);
    await rail.facilitator.resume();
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });
  });

  it('pays a 402 with the stock client (payingFetch): signed, verified and settled through the facilitator', async () => {
    const requirements = rail.requirements(AMOUNT);
    const server: Server = createServer(async (req, res) => {
      const signature = req.headers['payment-signature'];
      if (typeof signature !== 'string') {
        const offer = encodePaymentRequiredHeader({
          x402Version: 2,
          resource: { url: `http://127.0.0.1${req.url}`, description: 'a test resource', mimeType: 'application/json' },
          accepts: [requirements],
        });
        res.writeHead(402, { 'payment-required': offer, 'content-type': 'application/json' }).end('{}');
        return;
      }
      const settled = await facilitator.settle(decodePaymentSignatureHeader(signature), requirements);
      res
        .writeHead(settled.success ? 200 : 402, {
          'payment-response': encodePaymentResponseHeader(settled),
          'content-type': 'application/json',
        })
        .end(JSON.stringify({ paid: settled.success }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const before = await rail.balanceOf(rail.payTo);
      const res = await payingFetch(rail.payerKeys[4])(
        `http://127.0.0.1:${(server.address() as { port: number }).port}/thing`,
        { method: 'POST', body: '{}' },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ paid: true });
      expect(receiptOf(res)).toMatchObject({ success: true, network: 'eip155:84532', payer: rail.payerAddresses[4] });
      expect(await rail.balanceOf(rail.payTo)).toBe(before + AMOUNT);
    } finally {
      server.close();
    }
  });

  it('a settlement that fails to send holds up none sent beside it: each of the others is mined at once', async () => {
    // anvil's dev account #3: funded with gas, a signer of the facilitator's own making beside the rail's.
    const { signer } = facilitatorSigner({
      rpcUrl: rail.rpcUrl,
      privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
    });
    const transferOf = (p: PaymentPayload) => {
      const { from, to, value, validAfter, validBefore, nonce } = p.payload.authorization as Record<string, string>;
      const { v, yParity, r, s } = parseSignature(p.payload.signature as `0x${string}`);
      return [from, to, BigInt(value!), BigInt(validAfter!), BigInt(validBefore!), nonce, Number(v ?? yParity), r, s];
    };
    const transfers = await Promise.all(
      [3, 4, 5].map(async (i) => transferOf(await createPayment(rail.payerKeys[i]!, rail.requirements(AMOUNT)))),
    );
    const forged = [...transfers[0]!];
    forged[2] = AMOUNT * 2n; // the signature no longer covers the value: the token refuses it before it is sent
    const sent = await Promise.allSettled(
      [forged, ...transfers].map((args) =>
        signer.writeContract({ address: rail.asset, abi: eip3009ABI, functionName: 'transferWithAuthorization', args }),
      ),
    );
    expect(sent[0]!.status).toBe('rejected');
    const receipts = await Promise.all(
      sent
        .slice(1)
        .map((s) => signer.waitForTransactionReceipt({ hash: (s as PromiseFulfilledResult<`0x${string}`>).value })),
    );
    expect(receipts.map((r) => r.status)).toEqual(['success', 'success', 'success']);
  }, 20_000);

  it('stop ends the chain and the facilitator', async () => {
    await rail.stop();
    await expect(fetch(rail.rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow(/fetch failed/);
    await expect(fetch(`${rail.facilitatorUrl}/supported`)).rejects.toThrow(/fetch failed/);
  });
});
