import { z } from 'zod';
import { SettleError, VerifyError } from '@x402/core/types';
import { createPublicClient, http, parseAbiItem, verifyTypedData, type PublicClient } from 'viem';
import { authorizationTypes, eip3009ABI } from '@x402/evm';
import {
  blockedReply,
  capabilityByName,
  edgeOf,
  type BlockedCode,
  type OpReply,
  type Blocked,
  type PaymentReceipt,
} from '@vcs/contract';
import {
  centsOfAtomic,
  offerFactsOf,
  requirementOf,
  requirementV1Of,
  x402Terms,
  type CallContext,
  type X402Terms,
} from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { FacilitatorClient } from './facilitator.ts';
import { jsonValue, type PaymentRow } from './rows.ts';
import { timedFacilitator } from '../metrics.ts';

/**
 * The x402 rail as commerce drives it: a payment checked against its offer, verified by the facilitator
 * (x402's standard HTTP API, facilitator.ts: nothing moves), sent once to settle only when its answer is worth
 * its price, and — whenever that answer is not a clear yes or a clear pre-broadcast no — decided from the chain (the
 * token's `authorizationState` and the latest block's time), never from our own clock. The states a payment moves
 * through are the table's (libs/contract lifecycles.ts); the paid call's steps (paidCall/) move them.
 */

const authorization = z.object({
  from: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  to: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  value: z.string().regex(/^\d+$/),
  validAfter: z.string().regex(/^\d+$/),
  validBefore: z.string().regex(/^\d+$/),
  nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
});
const evmPayload = z.looseObject({ signature: z.string().regex(/^0x[0-9a-fA-F]+$/), authorization });
const payloadV2 = z.looseObject({
  x402Version: z.literal(2),
  accepted: z.looseObject({
    scheme: z.string(),
    network: z.string(),
    amount: z.string(),
    asset: z.string(),
    payTo: z.string(),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  payload: evmPayload,
  extensions: z.record(z.string(), z.unknown()).optional(),
});
const payloadV1 = z.looseObject({
  x402Version: z.literal(1),
  scheme: z.string(),
  network: z.string(),
  payload: evmPayload,
});
/** A decoded PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1) header, as the gateway passes it on. */
export const paymentHeader = z.union([payloadV2, payloadV1]);
export type PaymentPayload = z.infer<typeof paymentHeader>;

export type { PaymentRow };

/** The chain has its transfer: the state the table's `prove` moves a payment to. */
export const isProven = (row: Pick<PaymentRow, 'status'>) => row.status === edgeOf('payment', 'prove').to;

/** What the intent offers, for checking a payment against and for the facilitator. */
export interface IntentTerms {
  id: string;
  capability: string;
  price: { amount: string; currency: string };
  ceiling: { amount: string; currency: string };
}

interface Rail {
  terms: X402Terms;
  facilitator: FacilitatorClient;
  chain: PublicClient | null;
}
const rails = new WeakMap<object, Rail>();
/** How long one settle request may take (X402_FACILITATOR_TIMEOUT_MS): a payment's lease is this plus the lease margin. */
export const facilitatorTimeoutMs = (services: Services) =>
  services.settings.X402_FACILITATOR_TIMEOUT_MS ?? Math.max(5_000, services.settings.BUS_TIMEOUT_MS * 2);
/** The configured rail of this process (settings parsed at start; the clients made once). */
export function railOf(services: Services): Rail {
  let r = rails.get(services.settings);
  if (!r) {
    const terms = x402Terms(services.settings);
    r = {
      terms,
      facilitator: new FacilitatorClient({
        url: terms.facilitatorUrl ?? 'http://127.0.0.1:1',
        timeoutMs: facilitatorTimeoutMs(services),
      }),
      chain: terms.rpcUrl
        ? (createPublicClient({
            // No cache: a block number 4 s old misses the transfer that just landed (a receipt with no transaction).
            cacheTime: 0,
            transport: http(terms.rpcUrl, { timeout: 5_000, retryCount: 1 }),
          }) as PublicClient)
        : null,
    };
    timedFacilitator(r.facilitator);
    rails.set(services.settings, r);
  }
  return r;
}

const authorizationUsed = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** The requirement the payment must meet, in its own version's form (what the facilitator checks it against). */
export function requirementFor(rail: Rail, t: IntentTerms, version: 1 | 2) {
  const facts = offerFactsOf(capabilityByName(t.capability)!, t.id);
  return version === 2 ? requirementOf(rail.terms, facts) : requirementV1Of(rail.terms, facts);
}

export type Refusal = { code: BlockedCode; message: string; x402Error: string };
const refused = (code: BlockedCode, message: string, x402Error: string): Refusal => ({ code, message, x402Error });

/** Check a payment against the intent's offer before anything is sent anywhere: each wrong term has its own code. */
export function checkPayment(rail: Rail, t: IntentTerms, p: PaymentPayload, nowMs: number): Refusal | null {
  const want = requirementOf(rail.terms, offerFactsOf(capabilityByName(t.capability)!, t.id));
  const a = p.payload.authorization;
  const scheme = p.x402Version === 2 ? p.accepted.scheme : p.scheme;
  const network = p.x402Version === 2 ? p.accepted.network : p.network;
  if (scheme !== 'exact')
    return refused(
      'payment-wrong-scheme',
      `this offer is paid with the exact scheme, not ${scheme}`,
      'unsupported_scheme',
    );
  if (network !== (p.x402Version === 2 ? rail.terms.network : rail.terms.v1Network)) {
    return refused(
      'payment-wrong-network',
      `the payment is on ${network}; this offer is paid on ${rail.terms.network}`,
      'invalid_network',
    );
  }
  if (p.x402Version === 2 && p.accepted.asset.toLowerCase() !== rail.terms.asset.toLowerCase()) {
    return refused(
      'payment-wrong-asset',
      `the payment is in ${p.accepted.asset}; this offer is paid in ${rail.terms.asset}`,
      'invalid_exact_evm_payload_asset_mismatch',
    );
  }
  const intentOfPayment = p.x402Version === 2 ? p.accepted.extra?.intentId : undefined;
  if (typeof intentOfPayment === 'string' && intentOfPayment !== t.id) {
    return refused(
      'payment-other-intent',
      `the payment was made for the offer of intent ${intentOfPayment}, not ${t.id}; ` +
        'pay that intent with it, or sign a payment for this offer',
      'invalid_payload',
    );
  }
  if (
    a.to.toLowerCase() !== rail.terms.payTo.toLowerCase() ||
    (p.x402Version === 2 && p.accepted.payTo.toLowerCase() !== rail.terms.payTo.toLowerCase())
  ) {
    return refused(
      'payment-wrong-recipient',
      `the payment pays ${a.to}; this offer is paid to ${rail.terms.payTo}`,
      'invalid_exact_evm_payload_recipient_mismatch',
    );
  }
  if (a.value !== want.amount) {
    return refused(
      'payment-wrong-amount',
      `the payment is for ${a.value} atomic units; ` +
        `${t.capability} costs exactly ${want.amount} (${t.price.amount} ${t.price.currency})`,
      'invalid_exact_evm_payload_authorization_value',
    );
  }
  if (Number(a.validBefore) * 1000 < nowMs + 6_000) {
    return refused(
      'payment-expired',
      `the payment's authorization expired at ${new Date(Number(a.validBefore) * 1000).toISOString()}; sign a new one`,
      'invalid_exact_evm_payload_authorization_valid_before',
    );
  }
  return null;
}

/** A facilitator's refusal reason, read as our code (its own words are passed on as x402's `error`). */
export function codeOfReason(reason: string): BlockedCode {
  const r = reason.toLowerCase();
  if (/nonce|already_used|used/.test(r)) return 'payment-already-used';
  if (/insufficient|balance|funds/.test(r)) return 'payment-insufficient-funds';
  if (/valid_before|valid_after|expired/.test(r)) return 'payment-expired';
  if (/signature/.test(r)) return 'payment-invalid-signature';
  if (/recipient|pay_to|payto/.test(r)) return 'payment-wrong-recipient';
  if (/value|amount/.test(r)) return 'payment-wrong-amount';
  if (/network|chain/.test(r)) return 'payment-wrong-network';
  if (/asset|token/.test(r)) return 'payment-wrong-asset';
  return 'payment-invalid';
}

/**
 * The answer for a payment refused for good: 402 (a fresh signature may succeed) with x402's reason beside our
 * code.
 */
export function paymentRefusal(
  services: Services,
  ctx: Pick<CallContext, 'environment'>,
  t: IntentTerms,
  r: Refusal,
): OpReply<Blocked, never> {
  return blockedReply(r.code, r.message, {
    x402Error: r.x402Error,
    capability: t.capability,
    intent: { id: t.id, status: 'pending' },
    next: { method: 'POST', path: `/intents/${t.id}/settle` },
  });
}

export function paymentPending(
  t: IntentTerms,
  code: 'payment-pending' | 'payment-unavailable',
  message: string,
  retryAfter: number,
): OpReply<Blocked, never> {
  return blockedReply(code, message, {
    retryAfter,
    capability: t.capability,
    intent: { id: t.id },
    next: { method: 'POST', path: `/intents/${t.id}/settle` },
  });
}

/** What the facilitator's /verify said of a payment: nothing moves either way. */
export type Verified =
  | { kind: 'valid' }
  /** Not a payment the facilitator would settle: the signature, the funds, the nonce, the validity window. */
  | { kind: 'refused'; refusal: Refusal }
  /** The facilitator did not answer (refused the connection, timed out, failed): nothing was sent, nothing ran. */
  | { kind: 'unavailable'; message: string };

/** The verifications under way in this process, by authorization: copies of one payment sent at once ask once. */
const verifying = new Map<string, Promise<Verified>>();

/**
 * Ask the facilitator's /verify whether it would settle the payment for `requirements` (x402's sellers' first step);
 * copies of the same authorization presented at once in this process share the one question.
 */
export function verifyOnce(
  services: Services,
  key: string,
  payload: PaymentPayload,
  requirements: Record<string, unknown>,
): Promise<Verified> {
  let v = verifying.get(key);
  if (!v) {
    v = verifyNow(services, payload, requirements).finally(() => verifying.delete(key));
    verifying.set(key, v);
  }
  return v;
}

async function verifyNow(
  services: Services,
  payload: PaymentPayload,
  requirements: Record<string, unknown>,
): Promise<Verified> {
  try {
    const v = await railOf(services).facilitator.verify(payload as never, requirements as never);
    if (v.isValid) return { kind: 'valid' };
    const reason = v.invalidReason ?? 'invalid_payload';
    return { kind: 'refused', refusal: refused(codeOfReason(reason), verifyMessage(reason, v.invalidMessage), reason) };
  } catch (e) {
    if (e instanceof VerifyError) {
      const reason = e.invalidReason ?? 'invalid_payload';
      return {
        kind: 'refused',
        refusal: refused(codeOfReason(reason), verifyMessage(reason, e.invalidMessage), reason),
      };
    }
    services.log.warn({ err: e }, 'x402 facilitator did not verify the payment');
    return {
      kind: 'unavailable',
      message:
        `the payment facilitator is not answering (${(e as Error).message}); ` +
        'nothing was charged and nothing ran: send the same request again in a moment',
    };
  }
}
const verifyMessage = (reason: string, message?: string) =>
  `the payment was not accepted: ${reason}${message ? ` (${message})` : ''}; nothing was charged: sign a new one`;

/**
 * Whether the authorization is signed by the wallet it names (EIP-712 over the token's domain, recovered offline: no
 * network, nothing moves). What proves a wallet asking for an answer it already paid for is that wallet.
 */
export async function signedBy(rail: Rail, p: PaymentPayload): Promise<boolean> {
  const a = p.payload.authorization;
  const chainId = Number(rail.terms.network.split(':')[1]);
  try {
    return await verifyTypedData({
      address: a.from as `0x${string}`,
      domain: {
        name: rail.terms.token.name,
        version: rail.terms.token.version,
        chainId,
        verifyingContract: rail.terms.asset as `0x${string}`,
      },
      types: authorizationTypes, // EIP-3009's, as x402's exact scheme signs them
      primaryType: 'TransferWithAuthorization',
      message: {
        from: a.from as `0x${string}`,
        to: a.to as `0x${string}`,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as `0x${string}`,
      },
      signature: p.payload.signature as `0x${string}`,
    });
  } catch {
    return false;
  }
}

/** What one settle request to the facilitator came to. */
export type Settled =
  | { kind: 'settled'; transaction: string | null }
  /** Refused before anything was broadcast (a verification failure), and the chain says unused: a 402. */
  | { kind: 'refused'; refusal: Refusal }
  /**
   * No clear answer: time-out, reset, 5xx, settlement_pending, a reason we do not know, the facilitator not reached
   * (nothing sent, but the chain has the last word all the same). The chain decides.
   */
  | { kind: 'doubt'; reason: string; transaction: string | null };

/**
 * A facilitator's reason that means it refused before broadcasting anything (x402's verification failures). Every
 * other reason — `settlement_pending`, `invalid_transaction_state`, one we do not know — may have moved money.
 */
const refusedBeforeBroadcast = (reason: string) =>
  // x402's exact EVM facilitator answers `invalid_exact_evm_transaction_failed` for anything thrown once it has
  // started sending, a receipt that never came included: that one, like settlement_pending, may have moved money.
  (reason.startsWith('invalid_') || /insufficient/.test(reason)) &&
  !/transaction_failed|transaction_state|settle|pending/.test(reason);

/** Send the payment to the facilitator's /settle, once, and read its answer without guessing. */
export async function settleOnce(services: Services, row: PaymentRow, first: boolean): Promise<Settled> {
  const rail = railOf(services);
  let reason: string;
  let transaction: string | null = null;
  try {
    // Stored by the binding from the parsed header and the offer's requirement (the facilitator's own types).
    const s = await rail.facilitator.settle(
      paymentHeader.parse(jsonValue(row.payload)) as never,
      jsonValue(row.requirements) as never,
    );
    if (s.success) return { kind: 'settled', transaction: s.transaction || null };
    reason = s.errorReason ?? 'settle_failed';
    transaction = s.transaction || null;
  } catch (e) {
    if (!(e instanceof SettleError)) {
      services.log.warn({ err: e, paymentId: row.id }, 'x402 settle outcome unknown; decided from the chain');
      return { kind: 'doubt', reason: `settle: ${(e as Error).message}`, transaction: null };
    }
    reason = e.errorReason ?? 'settle_failed';
    transaction = e.transaction || null;
  }
  if (!first || transaction || !refusedBeforeBroadcast(reason)) return { kind: 'doubt', reason, transaction };
  // A verification failure: nothing was broadcast by this request, but an earlier attempt's transfer may have
  // landed (a retry's "nonce already used"): the chain has the last word.
  const v = await chainVerdict(services, row);
  if (v.kind === 'used') return { kind: 'settled', transaction: v.transaction };
  if (v.kind === 'unknown') return { kind: 'doubt', reason, transaction: null };
  return {
    kind: 'refused',
    refusal: refused(codeOfReason(reason), `the payment did not settle: ${reason}`, reason),
  };
}

/** What the chain proves about an authorization, read at one block. */
export type Verdict =
  | { kind: 'used'; transaction: string | null }
  /** The node has a block stamped past validBefore and the nonce was unused in it: it can never move money. */
  | { kind: 'never' }
  /** Unused, and the chain's time is still before validBefore: it may yet land. */
  | { kind: 'open' }
  /** The node did not answer. */
  | { kind: 'unknown' };

/** Read the authorization's state and the latest block's time together, at one block: the chain's clock, not ours. */
export async function chainVerdict(services: Services, row: PaymentRow): Promise<Verdict> {
  const chain = railOf(services).chain;
  if (!chain) return { kind: 'unknown' };
  try {
    const block = await chain.getBlock({ blockTag: 'latest' });
    const used = await chain.readContract({
      address: row.asset as `0x${string}`,
      abi: eip3009ABI,
      functionName: 'authorizationState',
      args: [row.payer as `0x${string}`, row.nonce as `0x${string}`],
      blockNumber: block.number,
    });
    if (used) return { kind: 'used', transaction: row.transaction ?? (await transactionOf(services, row)) };
    return block.timestamp >= BigInt(row.valid_before) ? { kind: 'never' } : { kind: 'open' };
  } catch (e) {
    services.log.warn({ err: e, paymentId: row.id }, 'x402 chain node did not answer');
    return { kind: 'unknown' };
  }
}

/** The transfer's transaction, found by its authorization (recent blocks only); null when it cannot be found. */
async function transactionOf(services: Services, row: PaymentRow): Promise<string | null> {
  const chain = railOf(services).chain;
  if (!chain) return null;
  try {
    const head = await chain.getBlockNumber({ cacheTime: 0 });
    const logs = await chain.getLogs({
      address: row.asset as `0x${string}`,
      event: authorizationUsed,
      args: { authorizer: row.payer as `0x${string}`, nonce: row.nonce as `0x${string}` },
      fromBlock: head > 5000n ? head - 5000n : 0n,
      toBlock: 'latest',
    });
    return logs[0]?.transactionHash ?? null;
  } catch {
    return null;
  }
}

/** The receipt of a settled payment, for the answer's meter and PAYMENT-RESPONSE. */
export function receiptOf(row: PaymentRow): PaymentReceipt {
  const cents = centsOfAtomic(row.amount_atomic);
  return {
    id: row.id,
    intentId: row.intent_id,
    network: row.network,
    asset: row.asset,
    payer: row.payer,
    payTo: row.pay_to,
    amount: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
    transaction: row.transaction,
  };
}

export const intentTermsOf = (r: {
  id: string;
  capability: string;
  price: unknown;
  ceiling: unknown;
}): IntentTerms => ({
  id: r.id,
  capability: r.capability,
  price: amount.parse(jsonValue(r.price)),
  ceiling: amount.parse(jsonValue(r.ceiling)),
});
const amount = z.looseObject({ amount: z.string(), currency: z.string() });
