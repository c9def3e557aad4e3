/**
 * Pay for a request as an agent with a wallet would, with the stock client: @x402/fetch (x402 v2: PAYMENT-REQUIRED
 * → PAYMENT-SIGNATURE → PAYMENT-RESPONSE; it falls back to v1's X-PAYMENT when a 402 offers only a v1 body) with
 * @x402/evm's exact scheme registered for every EVM network, v2 and v1, and a viem local account.
 *
 *   tsx deploy/x402-rail/src/pay.ts <url> [--body '<json>'] [--method POST] [--key 0x<payer key>] [--max '$10']
 *     [--header 'Name: value']...
 *
 * `--header` (repeatable) sends a header with both requests, the 402's and the paid one (`Sandbox-Trigger: fail`).
 * The key also comes from X402_PAYER_KEY; without either, the rail's first payer (anvil's dev account #1) pays.
 * Prints the status, the PAYMENT-RESPONSE (or X-PAYMENT-RESPONSE) header decoded, and the body; exits 1 unless 2xx.
 */
import { fileURLToPath } from 'node:url';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { Money, PaymentPayload, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { KEYS } from './chain.ts';

export interface PayingFetchOptions {
  /**
   * The most one payment may take, in dollars (the stock client refuses more than $1 unless told, and assets its
   * default table does not know; the rail's token is at Base Sepolia's USDC address, which it knows).
   */
  maxPerPayment?: Money;
  fetch?: typeof globalThis.fetch;
}

/** The stock client for a wallet: the exact EVM scheme for every EVM network, v2 and v1. */
function clientFor(payerKey: Hex) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  return client;
}

/** A fetch that answers a 402 by paying it from `payerKey`'s wallet and retrying, as @x402/fetch does. */
export function payingFetch(
  payerKey: Hex = (process.env.X402_PAYER_KEY as Hex | undefined) ?? KEYS.payer,
  { maxPerPayment = '$10', fetch = globalThis.fetch }: PayingFetchOptions = {},
) {
  return wrapFetchWithPayment(fetch, clientFor(payerKey).setSpendControls({ maxAmountPerPayment: maxPerPayment }));
}

/**
 * A signed v2 payment for `requirements`, made as @x402/fetch makes one for a 402 that offers only them (x402Client's
 * createPaymentPayload with the exact EVM scheme: a fresh EIP-3009 authorization, validBefore now + maxTimeoutSeconds),
 * without spend limits: for tests and benchmarks that talk to a facilitator or a server directly.
 */
export function createPayment(
  payerKey: Hex,
  requirements: PaymentRequirements,
  resource: ResourceInfo = { url: 'http://127.0.0.1/', description: '', mimeType: 'application/json' },
): Promise<PaymentPayload> {
  return clientFor(payerKey)
    .setSpendControls(false)
    .createPaymentPayload({ x402Version: 2, resource, accepts: [requirements] });
}

/** The settlement receipt a paid answer carries (v2 PAYMENT-RESPONSE, v1 X-PAYMENT-RESPONSE), decoded. */
export function receiptOf(res: Response) {
  const header = res.headers.get('payment-response') ?? res.headers.get('x-payment-response');
  return header ? decodePaymentResponseHeader(header) : undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const usage =
    'usage: tsx deploy/x402-rail/src/pay.ts <url> ' +
    "[--body '<json>'] [--method POST] [--key 0x<payer key>] [--max '$10'] [--header 'Name: value']...";
  const url = argv[0];
  if (!url || url.startsWith('--')) {
    console.error(usage);
    process.exit(2);
  }
  const headers: Record<string, string> = {};
  for (let i = argv.indexOf('--header'); i >= 0; i = argv.indexOf('--header', i + 1)) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/.exec(argv[i + 1] ?? '');
    if (!m) {
      console.error(`--header takes 'Name: value', not ${JSON.stringify(argv[i + 1] ?? '')}\n${usage}`);
      process.exit(2);
    }
    headers[m[1]!.toLowerCase()] = m[2]!.trim();
  }
  const body = opt('body');
  const pay = payingFetch(
    (opt('key') as Hex | undefined) ?? (process.env.X402_PAYER_KEY as Hex | undefined) ?? KEYS.payer,
    { maxPerPayment: opt('max') ?? '$10' },
  );
  const res = await pay(url, {
    method: opt('method') ?? (body === undefined ? 'GET' : 'POST'),
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
  });
  const receipt = receiptOf(res);
  console.log(res.status, receipt ? JSON.stringify(receipt) : '(no receipt header)');
  console.log(await res.text());
  process.exitCode = res.ok ? 0 : 1;
}
