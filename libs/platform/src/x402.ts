import { z } from 'zod';
import { setting } from './config.ts';
import { offerTerms, type Capability } from '@vcs/contract';

/**
 * The x402 rail's settings (README's settings table), read by the gateway (the 402's PAYMENT-REQUIRED) and by
 * commerce (verification, settlement, reconciliation), so both name the same network, asset and payee.
 * With no facilitator the offers are mirrored on x402 as before and settlement is the key route, simulated.
 */
/** The bytes of X402_RECEIPT_SIGNING_KEY (base64 or base64url). */
export const receiptSigningSeed = (raw: string) =>
  Buffer.from(raw.trim().replace(/-/g, '+').replace(/_/g, '/'), 'base64');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected an EVM address, 0x and 40 hex digits');
export const x402Settings = z.object({
  /** An x402 facilitator's base URL (POST /verify, POST /settle, GET /supported); set, payments are accepted. */
  X402_FACILITATOR_URL: setting.unsetWhenEmpty(z.string().url()),
  /**
   * How long one settle request to the facilitator may take (ms); unset: 5000 or twice BUS_TIMEOUT_MS, whichever is
   * longer. A settlement still open then answers 503 payment-pending, and the chain decides it (payments.ts).
   */
  X402_FACILITATOR_TIMEOUT_MS: setting.unsetWhenEmpty(setting.int(500, 120_000)),
  /**
   * How long a paid request whose outcome is still being decided (its capability running, its settlement in doubt) is
   * held before it is answered 503 payment-pending (ms): the gateway passes it to commerce, which answers within it
   * once the outcome is known, so a stock client, which waits this long and does not resend, gets the answer from its
   * first call where it can.
   */
  X402_PAYMENT_HOLD_MS: setting.int(0, 120_000).default(25_000),
  /** A JSON-RPC node of X402_NETWORK: the reconciler reads the token's authorizationState there. */
  X402_RPC_URL: setting.unsetWhenEmpty(z.string().url()),
  /** Who is paid. Unset, offers name a burn address (nothing can be collected there). */
  X402_PAY_TO: setting.unsetWhenEmpty(address),
  /** CAIP-2 network of the offers. */
  X402_NETWORK: z
    .string()
    .regex(/^[a-z0-9-]+:[A-Za-z0-9-]+$/, 'expected a CAIP-2 network such as eip155:84532')
    .default('eip155:84532'),
  /** The EIP-3009 token paid in (6 decimals): Base Sepolia's USDC by default. */
  X402_ASSET: address.default('0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
  /**
   * The Ed25519 key (its 32-byte seed, base64: `openssl rand -base64 32`) the gateway signs offers and receipts with
   * (x402's offer-receipt extension). Unset: a labelled dev-only key in the embedded mode, nothing signed otherwise.
   */
  X402_RECEIPT_SIGNING_KEY: setting
    .unsetWhenEmpty(z.string())
    .refine(
      (raw) =>
        raw === undefined || (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw.trim()) && receiptSigningSeed(raw).length === 32),
      'expected an Ed25519 seed: 32 bytes, base64-encoded (openssl rand -base64 32)',
    ),
});
export type X402Settings = z.infer<typeof x402Settings>;

/** Where offers point when no payee is configured: an address nobody holds the key of. */
export const SANDBOX_PAY_TO = '0x0000000000000000000000000000000000000402';

/** x402 v1 names networks by word; the ones we can offer on. */
const v1Names: Record<string, string> = { 'eip155:84532': 'base-sepolia', 'eip155:8453': 'base' };
/**
 * The token's EIP-712 domain name, which the payer signs under: Circle's USDC is "USDC" on Base Sepolia, "USD Coin" on
 * Base.
 */
const tokenNames: Record<string, string> = { 'eip155:8453': 'USD Coin' };

export interface X402Terms {
  /** Payments are taken (a facilitator is configured); otherwise offers are only mirrored. */
  live: boolean;
  network: string;
  v1Network: string | null;
  asset: string;
  payTo: string;
  facilitatorUrl: string | null;
  rpcUrl: string | null;
  token: { name: string; version: string; decimals: 6 };
}

/** The terms from parsed settings; a facilitator without a payee or a chain node to reconcile on is a wrong setting. */
export function x402Terms(s: X402Settings): X402Terms {
  const network = s.X402_NETWORK;
  const live = !!s.X402_FACILITATOR_URL;
  if (live && !s.X402_PAY_TO)
    throw new Error(
      'config error: X402_PAY_TO: required when X402_FACILITATOR_URL is set (the address payments go to)',
    );
  if (live && !s.X402_RPC_URL)
    throw new Error(
      'config error: X402_RPC_URL: required when X402_FACILITATOR_URL is set ' +
        '(a node of X402_NETWORK, to reconcile payments whose outcome is unknown)',
    );
  return {
    live,
    network,
    v1Network: v1Names[network] ?? null,
    asset: s.X402_ASSET,
    payTo: s.X402_PAY_TO ?? SANDBOX_PAY_TO,
    facilitatorUrl: s.X402_FACILITATOR_URL ?? null,
    rpcUrl: s.X402_RPC_URL ?? null,
    token: { name: tokenNames[network] ?? 'USDC', version: '2', decimals: 6 },
  };
}

/** A decimal amount of the token ("0.50") in its atomic units ("500000"). */
export function atomicAmount(amount: string): string {
  const [whole, frac = ''] = amount.split('.');
  return (BigInt(whole!) * 10n ** 6n + BigInt((frac + '000000').slice(0, 6))).toString();
}
/** Atomic units to cents, rounding down (a payment never counts for more than it was). */
export const centsOfAtomic = (atomic: string) => Number(BigInt(atomic) / 10_000n);

/**
 * How long a payment may take to settle: the offer's life, a constant so the offer a client saw is the one we check.
 */
export const X402_TIMEOUT_SECONDS = 900;

export interface OfferFacts {
  intentId: string;
  capability: string;
  model: 'free' | 'flat' | 'metered' | 'take-rate';
  price: { amount: string; currency: string };
  ceiling: { amount: string; currency: string };
  settlePath: string;
  resourceUrl: string;
  description: string;
}

/** The facts of the offer for capability `c` and intent `intentId`: the one place an offer's terms are made. */
export function offerFactsOf(c: Capability, intentId: string, resourceUrl = ''): OfferFacts {
  const t = offerTerms(c);
  return {
    intentId,
    capability: c.name,
    model: c.price.model,
    price: t.price,
    ceiling: t.ceiling,
    settlePath: `/intents/${intentId}/settle`,
    resourceUrl,
    description: c.summary,
  };
}

/**
 * The x402 requirement of an offer. With payments taken, every price is `exact` at what this one call costs (the
 * price, never the ceiling: docs/decisions.md says why not `upto`); mirrored only, flat prices are `exact` and
 * metered and take-rate ones `upto` their hard ceiling, as before.
 */
export function requirementOf(t: X402Terms, o: OfferFacts) {
  const scheme = t.live || o.model === 'flat' ? 'exact' : 'upto';
  return {
    scheme,
    network: t.network,
    amount: atomicAmount(scheme === 'exact' ? o.price.amount : o.ceiling.amount),
    asset: t.asset,
    payTo: t.payTo,
    maxTimeoutSeconds: X402_TIMEOUT_SECONDS,
    extra: {
      name: t.token.name,
      version: t.token.version,
      intentId: o.intentId,
      settle: { method: 'POST', path: o.settlePath },
      price: o.price,
      ceiling: o.ceiling,
    },
  };
}

/** The v1 form of the same requirement (one scheme, `exact`; `maxAmountRequired`). */
export function requirementV1Of(t: X402Terms, o: OfferFacts) {
  const v2 = requirementOf(t, o);
  return {
    scheme: 'exact' as const,
    network: t.v1Network ?? t.network,
    maxAmountRequired: t.live ? v2.amount : atomicAmount(o.ceiling.amount),
    resource: o.resourceUrl,
    description: o.description,
    mimeType: 'application/json',
    payTo: t.payTo,
    maxTimeoutSeconds: X402_TIMEOUT_SECONDS,
    asset: t.asset,
    extra: v2.extra,
  };
}
