// Paying an OFFER with x402 from a wallet key in the environment (X402_PAYER_KEY). The stock x402 client signs
// (@x402/core's x402Client with @x402/evm's exact scheme and a viem local account); the SDK's `settle` sends it.
// Those modules are loaded here, on the first payment, by dynamic import: they stay out of the bundle every call
// loads (scripts/build.js marks them external) and an unpaid call never reads them.
import type { Offer, X402Payer } from '@vcs/sdk';

/**
 * The most one payment may take when neither `--max` nor X402_MAX_PAYMENT says: the stock x402 client's own
 * default.
 */
export const DEFAULT_MAX_PAYMENT = '1.00';

const KEY = /^0x[0-9a-fA-F]{64}$/;
const DOLLARS = /^\$?(\d+(?:\.\d{1,6})?)$/;

/** What the environment and flags say about paying: nothing (print the OFFER), a payer's terms, or a usage error. */
export type PaySettings = { pay: false } | { pay: true; key: `0x${string}`; max: string } | { problem: string };

export function paySettings(flags: Record<string, string>, env: NodeJS.ProcessEnv): PaySettings {
  const key = env.X402_PAYER_KEY?.trim();
  if (!key) {
    return flags.pay === 'true'
      ? {
          problem:
            "--pay needs a wallet: set X402_PAYER_KEY to the payer's private key (0x and 64 hex digits) " +
            'in the environment; vcs takes no key on the command line',
        }
      : { pay: false };
  }
  if (!KEY.test(key))
    return { problem: 'X402_PAYER_KEY is not a private key (0x and 64 hex digits); unset it to call without paying' };
  const rawMax = flags.max ?? env.X402_MAX_PAYMENT ?? DEFAULT_MAX_PAYMENT;
  const max = dollarsOf(rawMax);
  if (max === undefined)
    return {
      problem:
        `${flags.max !== undefined ? '--max' : 'X402_MAX_PAYMENT'} must be dollars, ` +
        `as 2.50 or $2.50 (not ${JSON.stringify(rawMax)})`,
    };
  return { pay: true, key: key as `0x${string}`, max };
}

/** Dollars as text ("2.50" or "$2.50") without the sign, or undefined when it is not an amount of dollars. */
export const dollarsOf = (raw: string) => DOLLARS.exec(raw.trim())?.[1];

/** Dollars as text to cents, exactly (no floating point): "1.005" is 100.5 cents, so compared in millionths. */
export const micros = (dollars: string) => {
  const [w, f = ''] = dollars.split('.');
  return BigInt(w!) * 1_000_000n + BigInt((f + '000000').slice(0, 6));
};

/** Why this offer is not paid under `max`, or undefined when it may be: the most it can cost (its ceiling) decides. */
export function overMax(offer: Offer, max: string): string | undefined {
  const { ceiling, price } = offer.value;
  if (!offer.value.x402) return 'it carries no x402 terms (value.x402); settle it with a key instead';
  if (ceiling.currency !== 'USD' || !DOLLARS.test(ceiling.amount))
    return `its ceiling is ${ceiling.amount} ${ceiling.currency}, not dollars`;
  if (micros(ceiling.amount) <= micros(max)) return undefined;
  const asks =
    ceiling.amount === price.amount ? `$${price.amount}` : `up to $${ceiling.amount} (price $${price.amount})`;
  return (
    `it asks ${asks}, more than the most vcs pays at once ` +
    `($${max}: --max, else X402_MAX_PAYMENT, else $${DEFAULT_MAX_PAYMENT}); pass --max ${ceiling.amount} to pay it`
  );
}

/**
 * The stock x402 client for the wallet, capped at `max` dollars a payment by its own spend controls (a second guard
 * beside `overMax`), wrapped so that every call signs the same payment: a retry after "payment-pending" sends the
 * authorisation already made, which the service settles once, instead of a new one.
 */
export async function walletPayer(key: `0x${string}`, max: string): Promise<X402Payer & { address: string }> {
  const [{ x402Client }, { registerExactEvmScheme }, { privateKeyToAccount }] = await Promise.all([
    import('@x402/core/client'),
    import('@x402/evm/exact/client'),
    import('viem/accounts'),
  ]);
  const account = privateKeyToAccount(key);
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  client.setSpendControls({ maxAmountPerPayment: `$${max}` });
  let signed: Promise<unknown> | undefined;
  return {
    address: account.address,
    createPaymentPayload: (required) => (signed ??= client.createPaymentPayload(required as never)),
  };
}
