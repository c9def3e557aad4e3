import { z } from 'zod';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { createPublicClient, http, parseAbi, parseAbiItem, type PublicClient } from 'viem';
import {
  blocked,
  newId,
  statusOfCode,
  capabilityByName,
  type BlockedCode,
  type OpReply,
  type PaymentReceipt,
} from '@vcs/contract';
import {
  centsOfAtomic,
  requirementOf,
  requirementV1Of,
  x402Terms,
  type CallContext,
  type Queryable,
  type X402Terms,
} from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { json } from './common.ts';

/**
 * x402 payments for intents: verify → bind to this intent (one authorisation pays for one intent only) → settle on
 * chain → the intent's execution runs. The facilitator does the chain's work over its standard HTTP API
 * (`HTTPFacilitatorClient`); what we add is the binding and the rule that a payment whose settlement outcome is
 * unknown is never answered with a 402 (a client would sign again and pay twice): it is reconciled from the chain
 * (the token's `authorizationState`) by the next retry or the reconciler.
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
});
const payloadV1 = z.looseObject({
  x402Version: z.literal(1),
  scheme: z.string(),
  network: z.string(),
  payload: evmPayload,
});
/** A decoded PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1) header, as the gateway passes it on. */
export const paymentHeader = z.union([payloadV2, payloadV1]);
type PaymentPayload = z.infer<typeof paymentHeader>;

export interface PaymentRow {
  id: string;
  intent_id: string;
  network: string;
  asset: string;
  pay_to: string;
  payer: string;
  nonce: string;
  amount_atomic: string;
  valid_before: string;
  x402_version: number;
  payload: unknown;
  requirements: unknown;
  status: 'verifying' | 'settling' | 'settled' | 'unknown' | 'refused' | 'expired';
  reason: string | null;
  transaction: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

/** What the intent offers, for checking a payment against and for the facilitator. */
export interface IntentTerms {
  id: string;
  capability: string;
  price: { amount: string; currency: string };
  ceiling: { amount: string; currency: string };
}

interface Rail {
  terms: X402Terms;
  facilitator: HTTPFacilitatorClient;
  chain: PublicClient | null;
}
const rails = new WeakMap<object, Rail>();
/** The configured rail of this process (settings parsed at start; the clients made once). */
export function railOf(services: Services): Rail {
  let r = rails.get(services.settings);
  if (!r) {
    const terms = x402Terms(services.settings);
    r = {
      terms,
      facilitator: new HTTPFacilitatorClient({
        url: terms.facilitatorUrl ?? 'http://127.0.0.1:1',
        timeoutMs: Math.max(5_000, services.settings.BUS_TIMEOUT_MS * 2),
      }),
      chain: terms.rpcUrl
        ? (createPublicClient({ transport: http(terms.rpcUrl, { timeout: 5_000, retryCount: 1 }) }) as PublicClient)
        : null,
    };
    rails.set(services.settings, r);
  }
  return r;
}

const tokenAbi = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);
const authorizationUsed = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** The facts of an offer x402 requirements are made from. */
function offerFacts(t: IntentTerms, resourceUrl = '') {
  const c = capabilityByName(t.capability);
  return {
    intentId: t.id,
    capability: t.capability,
    model: c?.price.model ?? 'flat',
    price: t.price,
    ceiling: t.ceiling,
    settlePath: `/intents/${t.id}/settle`,
    resourceUrl,
    description: c?.summary ?? t.capability,
  };
}

/** The requirement the payment must meet, in its own version's form (what the facilitator checks it against). */
export function requirementFor(rail: Rail, t: IntentTerms, version: 1 | 2) {
  return version === 2 ? requirementOf(rail.terms, offerFacts(t)) : requirementV1Of(rail.terms, offerFacts(t));
}

export type Refusal = { code: BlockedCode; message: string; x402Error: string };
const refused = (code: BlockedCode, message: string, x402Error: string): Refusal => ({ code, message, x402Error });

/** Check a payment against the intent's offer before anything is sent anywhere: each wrong term has its own code. */
export function checkPayment(rail: Rail, t: IntentTerms, p: PaymentPayload, nowMs: number): Refusal | null {
  const want = requirementOf(rail.terms, offerFacts(t));
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
): OpReply {
  const a = blocked(r.code, r.message, {
    x402Error: r.x402Error,
    capability: t.capability,
    intent: { id: t.id, status: 'pending' },
    next: { method: 'POST', path: `/intents/${t.id}/settle` },
  });
  return { status: statusOfCode(r.code), answer: a as unknown as Record<string, unknown> };
}

export function paymentPending(
  t: IntentTerms,
  code: 'payment-pending' | 'payment-unavailable',
  message: string,
  retryAfter: number,
): OpReply {
  const a = blocked(code, message, {
    retryAfter,
    capability: t.capability,
    intent: { id: t.id },
    next: { method: 'POST', path: `/intents/${t.id}/settle` },
  });
  return { status: statusOfCode(code), answer: a as unknown as Record<string, unknown> };
}

/** Bind a payment to the intent (one authorisation, one intent): the new row, the same payment again, or a refusal. */
export async function bindPayment(
  q: Queryable,
  services: Services,
  t: IntentTerms,
  p: PaymentPayload,
): Promise<{ row: PaymentRow; fresh: boolean } | Refusal | { pending: PaymentRow }> {
  const rail = railOf(services);
  const a = p.payload.authorization;
  const key = [rail.terms.network, rail.terms.asset, a.from, a.nonce];
  // In one look: this authorization's row, if any, and the intent's live payment, if any (both locked).
  const { rows } = await q.query<PaymentRow>(
    `select * from payments
      where (network = $1 and lower(asset) = lower($2) and lower(payer) = lower($3) and lower(nonce) = lower($4))
        or (intent_id = $5 and status in ('verifying', 'settling', 'unknown', 'settled')) for update`,
    [...key, t.id],
  );
  const had = rows.find(
    (r) =>
      r.network === key[0] &&
      r.asset.toLowerCase() === key[1]!.toLowerCase() &&
      r.payer.toLowerCase() === key[2]!.toLowerCase() &&
      r.nonce.toLowerCase() === key[3]!.toLowerCase(),
  );
  if (had && had.intent_id !== t.id)
    return refused(
      'payment-other-intent',
      `this payment authorization already pays for intent ${had.intent_id}; ` +
        `one authorization pays for one intent only: sign a new one for ${t.id}`,
      'invalid_exact_evm_nonce_already_used',
    );
  if (had && had.status !== 'refused' && had.status !== 'expired') return { row: had, fresh: false };
  const live = rows.find((r) => r !== had && r.intent_id === t.id && r.status !== 'refused' && r.status !== 'expired');
  if (live) return { pending: live };
  const now = services.clock.now().toISOString();
  const requirement = requirementFor(rail, t, p.x402Version);
  if (had) {
    // Bound and about to be sent to the facilitator: `settling` from here (a process that dies now leaves it to the
    // reconciler).
    const again = await q.query<PaymentRow>(
      `update payments set status = 'settling', reason = null, payload = $2, updated_at = $3 where id = $1 returning *`,
      [had.id, JSON.stringify(p), now],
    );
    return { row: again.rows[0]!, fresh: true };
  }
  const made = await q.query<PaymentRow>(
    `insert into payments(
       id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before, x402_version, payload,
       requirements, status, created_at, updated_at
     )
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,'settling',$13,$13) returning *`,
    [
      newId('payment'),
      t.id,
      ...key.slice(0, 2),
      rail.terms.payTo,
      key[2],
      key[3],
      a.value,
      a.validBefore,
      p.x402Version,
      JSON.stringify(p),
      JSON.stringify(requirement),
      now,
    ],
  );
  return { row: made.rows[0]!, fresh: true };
}

const setStatus = (
  q: Queryable,
  services: Services,
  id: string,
  status: PaymentRow['status'],
  extra: { reason?: string | null; transaction?: string | null } = {},
) =>
  q.query(
    `update payments
     set status = $2, reason = coalesce($3, reason), transaction = coalesce($4, transaction), updated_at = $5
     where id = $1`,
    [id, status, extra.reason ?? null, extra.transaction ?? null, services.clock.now().toISOString()],
  );

/** Where a payment stands after one step of driving it: settled on chain, refused for good, or not known yet. */
export type Drive =
  | { kind: 'settled'; transaction: string | null }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'unavailable'; message: string }
  | { kind: 'unknown'; message: string };

/** A request that never reached its server (connection refused): certainly not acted on. */
const connectionRefused = (e: unknown): boolean => {
  const cause = (e as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
  return (
    cause?.code === 'ECONNREFUSED' ||
    !!cause?.errors?.some((x) => x.code === 'ECONNREFUSED') ||
    /ECONNREFUSED/.test(String((e as Error).message))
  );
};

/**
 * Settle on chain through the facilitator. Any answer but a clear success is checked against the chain: the
 * authorization used means the money moved (whatever the facilitator said); unused and no answer means unknown.
 */
export async function settlePayment(services: Services, row: PaymentRow, first = false): Promise<Drive> {
  const rail = railOf(services);
  if (!first) await setStatus(services.db, services, row.id, 'settling'); // a first attempt was bound as settling
  let reason: string | null = null;
  try {
    const s = await rail.facilitator.settle(json(row.payload), json(row.requirements));
    if (s.success) return { kind: 'settled', transaction: s.transaction || null };
    reason = s.errorReason ?? 'settle_failed';
  } catch (e) {
    const data = (e as { response?: { success?: boolean; errorReason?: string } }).response;
    if (data && data.success === false) reason = data.errorReason ?? 'settle_failed';
    else if (first && connectionRefused(e)) {
      // The facilitator was never reached: nothing was sent, nothing moved. The payment is let go (the same one
      // may be sent again), and the caller is told to come back: 503, never 402.
      await services.db.query(`delete from payments where id = $1 and status = 'settling'`, [row.id]);
      services.log.warn({ err: e, paymentId: row.id }, 'x402 facilitator refused the connection');
      return {
        kind: 'unavailable',
        message:
          `the payment facilitator is not answering (${(e as Error).message}); ` +
          'nothing was charged and nothing ran: send the same request again in a moment',
      };
    } else {
      await setStatus(services.db, services, row.id, 'unknown', { reason: `settle: ${(e as Error).message}` });
      services.log.warn(
        { err: e, paymentId: row.id },
        'x402 settle outcome unknown; the reconciler decides from the chain',
      );
      return reconcilePayment(services, { ...row, status: 'unknown' }, false);
    }
  }
  const used = await authorizationUsed_(services, row);
  if (used === true) return { kind: 'settled', transaction: await transactionOf(services, row) };
  if (used === null) {
    await setStatus(services.db, services, row.id, 'unknown', { reason });
    return {
      kind: 'unknown',
      message: `the payment's settlement could not be confirmed (${reason}); it is being checked on chain`,
    };
  }
  await setStatus(services.db, services, row.id, 'refused', { reason });
  return { kind: 'refused', refusal: refused(codeOfReason(reason), `the payment did not settle: ${reason}`, reason) };
}

async function authorizationUsed_(services: Services, row: PaymentRow): Promise<boolean | null> {
  const chain = railOf(services).chain;
  if (!chain) return null;
  try {
    return await chain.readContract({
      address: row.asset as `0x${string}`,
      abi: tokenAbi,
      functionName: 'authorizationState',
      args: [row.payer as `0x${string}`, row.nonce as `0x${string}`],
    });
  } catch (e) {
    services.log.warn({ err: e, paymentId: row.id }, 'x402 chain node did not answer authorizationState');
    return null;
  }
}

/** The transfer's transaction, found by its authorization (recent blocks only); null when it cannot be found. */
async function transactionOf(services: Services, row: PaymentRow): Promise<string | null> {
  const chain = railOf(services).chain;
  if (!chain) return null;
  try {
    const head = await chain.getBlockNumber();
    const logs = await chain.getLogs({
      address: row.asset as `0x${string}`,
      event: authorizationUsed,
      args: { authorizer: row.payer as `0x${string}`, nonce: row.nonce as `0x${string}` },
      fromBlock: head > 5000n ? head - 5000n : 0n,
      toBlock: head,
    });
    return logs[0]?.transactionHash ?? null;
  } catch {
    return null;
  }
}

/**
 * Decide a payment whose settlement outcome is unknown, from the chain: used → settled; unused while the
 * authorization is still valid → the same authorization is settled again (the token's nonce makes it once);
 * unused and expired → it can never move money: let go (the intent stays pending).
 */
export async function reconcilePayment(services: Services, row: PaymentRow, resubmit = true): Promise<Drive> {
  const used = await authorizationUsed_(services, row);
  if (used === true) return { kind: 'settled', transaction: row.transaction ?? (await transactionOf(services, row)) };
  if (used === null)
    return {
      kind: 'unknown',
      message:
        "the payment's settlement is not known yet: the chain node is not answering; nothing will be charged twice",
    };
  if (Number(row.valid_before) * 1000 <= services.clock.now().getTime()) {
    await setStatus(services.db, services, row.id, 'expired', { reason: 'authorization expired unused' });
    return {
      kind: 'refused',
      refusal: refused(
        'payment-expired',
        "the payment's authorization expired before it settled; nothing was charged: sign a new one",
        'invalid_exact_evm_payload_authorization_valid_before',
      ),
    };
  }
  if (!resubmit) return { kind: 'unknown', message: "the payment's settlement is not known yet; it is being settled" };
  return settlePayment(services, row);
}

/** The receipt of a settled payment, for the answer's meter and PAYMENT-RESPONSE. */
export function receiptOf(row: PaymentRow): PaymentReceipt {
  const cents = centsOfAtomic(row.amount_atomic);
  return {
    id: row.id,
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
}): IntentTerms => ({ id: r.id, capability: r.capability, price: json(r.price), ceiling: json(r.ceiling) });
