import {
  canonicalJson,
  capabilityByName,
  claimOf,
  edgeOf,
  lifecycles,
  inFlightStates,
  isFinal,
  isInFlight,
  type InFlightOf,
  newId,
  opTimeouts,
  ops,
  problemsOf,
  type Blocked,
  type OpInput,
  type OpReply,
  type OpReplyOf,
  type PaidCallMembers,
  type PillarAnswer,
} from '@vcs/contract';
import {
  isPaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
  validatePaymentIdentifier,
} from '@x402/extensions/payment-identifier';
import { isUniqueViolation, wrote, writeTogether, type CallContext, type Queryable } from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { json, refuse, Refused } from './common.ts';
import { charged } from './charge.ts';
import { executionInsert, findExecution, pendingReply, settleExecution, type ExecutionRow } from './executions.ts';
import {
  findIntent,
  insertIntent,
  newIntentExecution,
  newOfferFor,
  newOfferReply,
  markDelivered,
  settlePath,
  withMeter,
  withNewOffer,
  type IntentRow,
} from './intents.ts';
import {
  checkPayment,
  intentTermsOf,
  isProven,
  paymentHeader,
  paymentPending,
  paymentRefusal,
  railOf,
  receiptOf,
  requirementFor,
  signedBy,
  verifyOnce,
  type IntentTerms,
  type PaymentPayload,
  type PaymentRow,
} from './payments.ts';
import { moveSql, statesSql } from './transition.ts';
import { countPayment } from '../metrics.ts';

/**
 * A paid call (x402), in the order it runs: the one pipeline every paid request takes (on a capability's route, on
 * its intent's settle route, from MCP through the settle route), each step a function below, in this order:
 *
 *   parsed → found | owed | offered → verified → bound → executed → charged → delivered
 *
 * 1. **parsed**: the header is an x402 exact EVM payment.
 * 2. **found**: the authorization (or its payment-identifier) was presented before: a retry, v1 or v2, on any route,
 *    reaches its intent; none of the checks for a new payment applies to it.
 * 3. **owed**: this wallet paid for this capability and this input and the answer never reached it: that answer, and
 *    the new authorization is never bound nor sent (nothing moves).
 * 4. **offered**: the intent it pays (the one it names, or — a v1 payment on a route — one made now for that route),
 *    honoured only for what was offered, and its terms checked against the offer (no network).
 * 5. **verified**: the facilitator's /verify (the signature, the funds, the nonce): nothing moves.
 * 6. **bound**: the payment held against its intent, the intent settling and its execution made, in one transaction.
 * 7. **executed**: the capability runs once; an answer worth its price is stored and withheld (intents.ts
 *    `finishIntent`); any other answer voids the payment: nothing moves, 0.00 charged.
 * 8. **charged**: the held payment settled by the facilitator, any doubt decided by the chain (charge.ts); proven,
 *    the intent collects (its answer released with the receipt); refused or expired unused, the answer is withheld.
 * 9. **delivered**: the answer with its meter and receipt, marked delivered (owed no more).
 *
 * A refusal is thrown (common.ts `Refused`) from any step and answered once, here, with what a paid call carries
 * beside its answer (`PaidCallMembers`: the intent, whether this request bound a new payment, the receipt, a refused
 * payment's x402 reason).
 */
export async function payCall(
  services: Services,
  req: OpInput<'intentsPay'> & { ctx: CallContext },
): Promise<OpReplyOf<'intentsPay'>> {
  const timeoutMs = opTimeouts(ops.intentsPay, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  const deadline = services.clock.now().getTime() + timeoutMs;
  // 7–8, for this request: driven on until final or waiting, then 9.
  const answer = async (p: Paying) =>
    delivered(services, req.ctx, await advanced(services, { ...p, requestId: req.ctx.requestId }, deadline), deadline);
  try {
    const pr = parsed(services, req);
    const seen = await looked(services, pr);
    const known = found(services, pr, seen.own);
    if (known) return await answer(known);
    const debt = await owed(services, pr, seen.owed);
    if (debt) {
      const out = await advanced(services, { ...debt, requestId: req.ctx.requestId }, deadline);
      // Withheld after all (its payment never landed): nothing is owed; this payment pays for a new answer.
      if (!withheld(out)) return await delivered(services, req.ctx, out, deadline);
    }
    const offer = await offered(services, pr, seen.named);
    if ('settled' in offer) return replay(offer.settled);
    if ('reoffered' in offer) return offer.reoffered;
    const requirements = await verified(services, pr, offer).catch(async (e: unknown) => {
      // Refused — unless a copy of this payment was bound (and settled) meanwhile: that is what the facilitator saw.
      const copy = await foundAfresh(services, pr);
      if (!copy) throw e;
      return copy;
    });
    if (isPaying(requirements)) return await answer(requirements);
    // A copy of this payment bound it first: it is a retry now.
    const paying = (await bound(services, pr, offer, requirements)) ?? (await foundAfresh(services, pr));
    if (!paying)
      throw new Refused(
        paymentPending(offer.terms, 'payment-pending', `intent ${offer.terms.id} is being settled another way`, 2),
        { intentId: offer.terms.id },
      );
    return await answer(paying);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    const members: PaidCallMembers = { intentId: e.members.intentId ?? req.intentId, bound: false };
    if (e.members.refusal) members.refusal = e.members.refusal;
    if (e.members.refusal) countPayment('refused');
    return { ...e.reply, meta: members };
  }
}

/** A payment as presented: the payload, its authorization's one key, its payment-identifier, and where it came. */
interface Presented {
  p: PaymentPayload;
  /** The authorization's one key: network, asset, payer, nonce (addresses and nonces compare without case). */
  key: [network: string, asset: string, payer: string, nonce: string];
  identifier: string | null;
  req: OpInput<'intentsPay'> & { ctx: CallContext };
}

/**
 * A payment on its way to its answer: its intent and payment as last read or moved (charge.ts moves them on).
 * `answer` is the capability's answer as this request's execution recorded it (a secret it holds is shown this once);
 * `fresh`, this request moved the intent to its final state (its answer is not a replay); `pending`, why there is no
 * answer yet (a 503 that says when to ask again).
 */
export interface Paying {
  intent: IntentRow;
  payment: PaymentRow;
  bound: boolean;
  /** The request answering with it (none: the reconciler, which answers nobody). */
  requestId?: string;
  claimed?: ExecutionRow;
  /** The intent's execution, when this request knows it (the event of its end names it). */
  executionId?: string;
  answer?: PillarAnswer;
  sendNow?: boolean;
  fresh?: boolean;
  pending?: OpReply<Blocked, never>;
}

const isPaying = (x: Paying | Record<string, unknown>): x is Paying => 'payment' in x && 'intent' in x;

/** 1. The header is an x402 exact-scheme EVM payment, v2 or v1, and this deployment takes payments. */
function parsed(services: Services, req: Presented['req']): Presented {
  const { ctx } = req;
  const rail = railOf(services);
  const named = req.intentId ?? '(none)';
  if (!rail.terms.live)
    refuse(
      services,
      ctx,
      'payments-not-accepted',
      'this deployment takes no x402 payments (no X402_FACILITATOR_URL is set); ' +
        `settle intent ${named} with POST ${settlePath(named)} and a key`,
      { next: { method: 'POST', path: settlePath(named) } },
    );
  const header = paymentHeader.safeParse(req.payment);
  if (!header.success)
    refuse(
      services,
      ctx,
      'payment-invalid',
      'the payment is not an x402 exact-scheme EVM payment (v2 PAYMENT-SIGNATURE or v1 X-PAYMENT: ' +
        'base64 JSON with payload.signature and payload.authorization); fix each problem listed',
      { problems: problemsOf(header.error.issues, 'header'), x402Error: 'invalid_payload' },
    );
  const p = header.data;
  const a = p.payload.authorization;
  return {
    p,
    key: [rail.terms.network, rail.terms.asset, a.from, a.nonce],
    identifier: identifierOf(services, ctx, p),
    req,
  };
}

/** x402's payment-identifier (a v2 payload's extensions): the client's own id for this payment, checked by the extension. */
function identifierOf(services: Services, ctx: CallContext, p: PaymentPayload): string | null {
  const ext = p.x402Version === 2 ? p.extensions?.[PAYMENT_IDENTIFIER] : undefined;
  if (!ext) return null;
  const validation = validatePaymentIdentifier(ext);
  if (!validation.valid || !isPaymentIdentifierExtension(ext))
    refuse(
      services,
      ctx,
      'payment-invalid',
      `the payment-identifier extension is not valid (${validation.errors?.join('; ')}); ` +
        'an id is 16-128 letters, digits, - and _',
      { x402Error: 'invalid_payload' },
    );
  // The offer's declaration echoed back without an id names no payment.
  return ext.info.id ?? null;
}

/** A payment row with its intent's row beside it (one look). */
type PaymentWithIntent = PaymentRow & { intent_row: IntentRow };
const paying = (row: PaymentWithIntent, bound = false): Paying => {
  const { intent_row, ...payment } = row;
  return { intent: json(intent_row), payment, bound };
};

/**
 * What the steps below decide on, read in one statement: the payments this authorization (or its payment-identifier)
 * already is (`own`, for found), the latest answer this wallet paid for this resource and never got (`owed`), and
 * the intent the payment names (`named`, for offered). The resource is the route's capability and input, or the
 * named intent's.
 */
/** The states of a payment whose answer may be owed (in flight, or proven): `payments_owed`'s (commerce 010). */
const OWED_STATES = statesSql([...inFlightStates('payment'), edgeOf('payment', 'prove').to]);

/**
 * The read of `looked`: $1–$4 the authorization's key (network, asset, payer, nonce), $5 its payment-identifier, $6
 * the intent it names, $7 and $8 the route's capability and input (or null: the named intent's).
 */
export const LOOKED_SQL = `with named as (select * from intents where id = $6),
   wanted as (
     select $7::text as capability, $8::jsonb as input where $7::text is not null
     union all select capability, input from named where $7::text is null)
   select 'own' as kind, to_jsonb(p) as payment, to_jsonb(i) as intent
   from payments p join intents i on i.id = p.intent_id
   where (p.network = $1 and lower(p.asset) = lower($2) and lower(p.payer) = lower($3) and lower(p.nonce) = lower($4))
      or p.payment_identifier = $5
   union all (
     select 'owed', to_jsonb(p), to_jsonb(i) from payments p join intents i on i.id = p.intent_id, wanted w
     where lower(p.payer) = lower($3) and p.delivered_at is null and p.status in (${OWED_STATES})
       and i.delivered_at is null
       and i.capability = w.capability and i.input = w.input
     order by p.created_at desc limit 1)
   union all select 'named', null, to_jsonb(n) from named n`;

interface Looked {
  own: PaymentWithIntent[];
  owed?: PaymentWithIntent;
  named?: IntentRow;
}
async function looked(services: Services, pr: Presented): Promise<Looked> {
  const { route, intentId } = pr.req;
  const [network, asset, payer, nonce] = pr.key;
  const c = route ? capabilityByName(route.capability) : undefined;
  const input = route ? c?.request.safeParse(route.input) : undefined;
  const { rows } = await services.db.query<{
    kind: 'own' | 'owed' | 'named';
    payment: PaymentRow | null;
    intent: IntentRow;
  }>(LOOKED_SQL, [
    network,
    asset,
    payer,
    nonce,
    pr.identifier,
    intentId ?? null,
    input?.success ? route!.capability : null,
    input?.success ? JSON.stringify(input.data) : null,
  ]);
  const withIntent = (r: (typeof rows)[number]): PaymentWithIntent => ({ ...json(r.payment), intent_row: r.intent });
  const owed = rows.find((r) => r.kind === 'owed');
  const named = rows.find((r) => r.kind === 'named');
  return {
    own: rows.filter((r) => r.kind === 'own').map(withIntent),
    owed: owed && withIntent(owed),
    named: named && json(named.intent),
  };
}

/**
 * 2. The authorization seen before (or its payment-identifier): a retry reaches the intent it pays, whoever sends it
 * and on whichever route — but only for that intent, and only for what it was offered for.
 */
function found(services: Services, pr: Presented, own: PaymentWithIntent[]): Paying | null {
  const { ctx, intentId, route } = pr.req;
  const [, , payer, nonce] = pr.key;
  if (!own.length) return null;
  const same = own.find(
    (r) => r.payer.toLowerCase() === payer.toLowerCase() && r.nonce.toLowerCase() === nonce.toLowerCase(),
  );
  if (!same) {
    const first = own[0]!;
    refuse(
      services,
      ctx,
      'payment-identifier-conflict',
      `payment id ${pr.identifier} was first sent with another payment (${first.id}, for intent ` +
        `${first.intent_id}); nothing was charged: send that payment again to read its answer, or use a new id`,
      { intent: { id: first.intent_id }, next: { method: 'POST', path: settlePath(first.intent_id) } },
    );
  }
  if (intentId && !route && intentId !== same.intent_id)
    refuse(
      services,
      ctx,
      'payment-other-intent',
      `this payment authorization already pays for intent ${same.intent_id}; one authorization pays for one ` +
        `intent only: read its answer by sending it to POST ${settlePath(same.intent_id)}`,
      { intent: { id: same.intent_id }, next: { method: 'POST', path: settlePath(same.intent_id) } },
    );
  const known = paying(same);
  if (route) wrongResource(services, ctx, known.intent, route);
  return known;
}

/** The authorization bound meanwhile (a copy of it won the binding): found(), read afresh. */
const foundAfresh = async (services: Services, pr: Presented) => found(services, pr, (await looked(services, pr)).own);

/**
 * 3. An answer this wallet paid for, for this capability and this input, that never reached it (its caller was told
 * 503 and went away): answered now, with nothing charged for the new authorization — which is never bound, nor sent.
 * The new authorization must be signed by that wallet (checked offline, EIP-712): no one else reads what it paid for.
 */
async function owed(services: Services, pr: Presented, debt: PaymentWithIntent | undefined): Promise<Paying | null> {
  if (!debt || !(await signedBy(railOf(services), pr.p))) return null;
  return paying(debt);
}

/** A payment whose intent ended without its answer (the payment refused or expired unused): nothing was paid. */
const withheld = (p: Paying) => !p.pending && isFinal('intent', p.intent.status) && !paid(p);
const paid = (p: Paying) => isProven(p.payment);

/** What a new payment pays: its intent, open for payment, and the offer's terms it was checked against. */
interface Offer {
  intent: IntentRow;
  terms: IntentTerms;
}

/**
 * 4. The intent a new payment pays — the one it names (the settle route's, or a v2 payment's accepted.extra.intentId),
 * or for a v1 payment on a route (v1 names none) one made now for that route — honoured only for what was offered
 * and only while it is open (one that can no longer be paid: `payableInstead`); then its terms checked against the
 * offer, before anything is sent anywhere. An intent already settled another way answers its stored answer, charging
 * nothing.
 */
async function offered(
  services: Services,
  pr: Presented,
  named: IntentRow | undefined,
): Promise<Offer | { settled: IntentRow } | { reoffered: OpReplyOf<'intentsPay'> }> {
  const { ctx, route, intentId } = pr.req;
  let r: IntentRow;
  if (intentId) {
    if (!named)
      refuse(
        services,
        ctx,
        'intent-not-found',
        `no intent ${intentId}; intent ids start pi_ and come from a 402 OFFER`,
      );
    r = named;
  } else {
    const made = await insertIntent(services, services.db, ctx, route!.capability, route!.input);
    if ('reply' in made) throw new Refused(made.reply);
    r = made.row;
  }
  if (route) wrongResource(services, ctx, r, route);
  const now = services.clock.now();
  // The intent it came for, or — that one no longer payable — the one it pays instead (payableInstead), once.
  for (let instead = false; ; instead = true) {
    ownIntent(services, ctx, r);
    const decision = claimOf('intent', r.status, null, now.getTime());
    if (decision === 'final' && r.status === edgeOf('intent', 'collect').to) return { settled: r };
    if (decision === 'busy')
      throw new Refused(
        paymentPending(
          intentTermsOf(r),
          'payment-pending',
          `intent ${r.id} is being settled; read the outcome with GET /intents/${r.id}`,
          2,
        ),
        { intentId: r.id },
      );
    if (decision === 'open' && new Date(r.expires_at) > now) break;
    const other = await payableInstead(services, pr, r, instead);
    if ('reoffered' in other) return other;
    r = other;
  }
  const t = intentTermsOf(r);
  const bad = checkPayment(railOf(services), t, pr.p, now.getTime());
  if (bad)
    throw new Refused(paymentRefusal(services, ctx, t, bad), { intentId: t.id, refusal: refusalOf(t, bad.x402Error) });
  return { intent: r, terms: t };
}

/** A payment for an intent is honoured only for the account that made it, or for any payer of one made without a key. */
function ownIntent(services: Services, ctx: CallContext, r: IntentRow): void {
  if (r.account_id && r.account_id !== ctx.account)
    refuse(
      services,
      ctx,
      'intent-other-account',
      `intent ${r.id} belongs to another account; pay it with the key of the account that made it, ` +
        'or without a key for an offer made without one',
      { intent: { id: r.id } },
    );
}

/**
 * The intent a payment pays when the one it came for can no longer be paid (expired, or failed: declined, its
 * payment refused or expired unused, its answer a failure). On that intent's settle route: the new offer for the same
 * call that the payment was signed for (a v2 payment names it), or for a v1 payment, which names none, a new offer
 * made now for it — as a v1 payment on a capability's route makes its own. Otherwise the answer is a new offer for
 * the same capability and input (402 OFFER: its PAYMENT-REQUIRED is what to sign), nothing charged.
 */
async function payableInstead(
  services: Services,
  pr: Presented,
  dead: IntentRow,
  again: boolean,
): Promise<IntentRow | { reoffered: OpReplyOf<'intentsPay'> }> {
  const { ctx, route } = pr.req;
  if (!again && !route) {
    if (pr.p.x402Version === 1) return newOfferFor(services, ctx, dead);
    const named = pr.p.accepted.extra?.intentId;
    const other = typeof named === 'string' && named !== dead.id ? await findIntent(services.db, named) : undefined;
    if (
      other &&
      other.capability === dead.capability &&
      canonicalJson(json(other.input)) === canonicalJson(json(dead.input))
    )
      return other;
  }
  const ended = json(dead.answer) as PillarAnswer | null;
  const why =
    dead.status === edgeOf('intent', 'decline').to && ended
      ? `intent ${dead.id} ended failed (${ended.type === 'BLOCKED' ? ended.value.code : ended.type})`
      : `intent ${dead.id} expired at ${new Date(dead.expires_at).toISOString()}`;
  const fresh = await newOfferFor(services, ctx, dead);
  return { reoffered: { ...newOfferReply(services, ctx, fresh, why), meta: { intentId: fresh.id, bound: false } } };
}

const refusalOf = (t: IntentTerms, x402Error: string) => ({ x402Error, capability: t.capability });

/** Honoured only for what was offered: the intent's capability, and its input (parsed as the capability parses it). */
function wrongResource(
  services: Services,
  ctx: CallContext,
  r: IntentRow,
  route: NonNullable<Presented['req']['route']>,
): void {
  const c = capabilityByName(route.capability);
  const input = c?.request.safeParse(route.input);
  const same =
    route.capability === r.capability && input?.success && canonicalJson(input.data) === canonicalJson(json(r.input));
  if (same) return;
  const offeredAt = capabilityByName(r.capability);
  // Next: its intent's settle route, where this payment pays what it was signed for with no body to restate.
  const next = { method: 'POST' as const, path: settlePath(r.id) };
  refuse(
    services,
    ctx,
    'payment-wrong-resource',
    route.capability === r.capability
      ? `this payment was made for ${r.capability} with another input (intent ${r.id}); nothing was charged: ` +
          `send it to POST ${next.path}, or with that intent's input, or sign the offer this request is answered with`
      : `this payment was made for ${r.capability} (intent ${r.id}), not ${route.capability}; nothing was charged ` +
          `here: send it to POST ${next.path} (or on ${offeredAt?.method ?? 'POST'} ${offeredAt?.path ?? next.path} ` +
          `with that intent's input), or pay this route's own offer`,
    { intent: { id: r.id, capability: r.capability }, next },
  );
}

/**
 * 5. The facilitator would settle it (x402's /verify: the signature, the funds, the nonce unused, the validity
 * window); nothing moves. Its requirement, in the payment's own version's form, is what will be settled.
 */
async function verified(services: Services, pr: Presented, offer: Offer): Promise<Record<string, unknown>> {
  const requirements = requirementFor(railOf(services), offer.terms, pr.p.x402Version);
  const v = await verifyOnce(services, pr.key.join(':').toLowerCase(), pr.p, requirements);
  if (v.kind === 'refused')
    throw new Refused(paymentRefusal(services, pr.req.ctx, offer.terms, v.refusal), {
      intentId: offer.terms.id,
      refusal: refusalOf(offer.terms, v.refusal.x402Error),
    });
  if (v.kind === 'unavailable')
    throw new Refused(paymentPending(offer.terms, 'payment-unavailable', v.message, 2), { intentId: offer.terms.id });
  return requirements;
}

/**
 * 6. Held: the payment bound to its intent (who pays stored with it, so what the reconciler finishes is that account's),
 * the intent settling, its execution made and claimed by this request — one statement (platform `writeTogether`).
 * Null: a copy of this payment (or of its payment-identifier) was bound first — its unique key fails the statement,
 * so nothing of it is written — or the intent was taken another way: found() decides.
 */
async function bound(
  services: Services,
  pr: Presented,
  offer: Offer,
  requirements: Record<string, unknown>,
): Promise<Paying | null> {
  const { ctx } = pr.req;
  const a = pr.p.payload.authorization;
  const [network, asset] = pr.key;
  const now = services.clock.now().toISOString();
  const paymentId = newId('payment');
  const r = offer.intent;
  const account = r.account_id ?? ctx.account;
  const execution = newIntentExecution(r, {
    account,
    keyId: ctx.keyId,
    environment: ctx.environment,
    trigger: (ctx.environment === 'sandbox' ? ctx.trigger : null) ?? r.trigger,
    paymentId,
  });
  const runMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS).innerMs;
  let made;
  try {
    made = await writeTogether(services.db, {
      // Still open (the move says so: pending, or nothing), then the one payment of this authorization.
      intent: moveSql('intent', r.id, 'pay', { account_id: account, claimed_at: now, payment_id: paymentId }),
      payment: {
        sql: `insert into payments(
                id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before, x402_version, payload,
                requirements, status, account_id, key_id, environment, payment_identifier, created_at, updated_at
              )
              select $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text,
                     $10::int, $11::jsonb, $12::jsonb, $13::text, $14::text, $15::text, $16::text, $17::text,
                     $18::timestamptz, $18::timestamptz
              where ${wrote('intent').sql} returning *`,
        params: [
          paymentId,
          r.id,
          network,
          asset,
          railOf(services).terms.payTo,
          a.from,
          a.nonce,
          a.value,
          a.validBefore,
          pr.p.x402Version,
          JSON.stringify(pr.p),
          JSON.stringify(requirements),
          lifecycles.payment.initial,
          ctx.account,
          ctx.keyId,
          ctx.environment,
          pr.identifier,
          now,
        ],
      },
      execution: executionInsert(services, execution, runMs, wrote('payment').sql),
    });
  } catch (e) {
    // A copy of this payment (its authorization, or its payment-identifier) is bound already.
    if (isUniqueViolation(e)) return null;
    throw e;
  }
  if (!made.intent || !made.payment) return null;
  const claimed: ExecutionRow = made.execution ?? (await findExecution(services.db, 'intent', r.id))!;
  return { intent: made.intent, payment: made.payment, bound: true, claimed, executionId: claimed.id };
}

/**
 * 7–8. Drive the intent on as the table says until it is final or has to wait: settling, its execution runs (or is
 * waited on); charging, its payment is settled and the chain decides any doubt (charge.ts). Shared by the paying
 * request, its retries, an owed answer's new request and the reconciler.
 */
export async function advanced(services: Services, p: Paying, deadline: number): Promise<Paying> {
  // The work each in-flight state waits on (the compiler checks every one has its step).
  const steps: Record<InFlightOf<'intent'>, (p: Paying) => Promise<Paying>> = {
    settling: (p) => executed(services, p, deadline),
    charging: (p) => charged(services, p, deadline),
  };
  for (let state = p.intent.status; !p.pending && isInFlight('intent', state); state = p.intent.status)
    p = await steps[state](p);
  return p;
}

/** 7. The intent's execution, run by this request (it just made it) or waited on; its finisher moved the intent on. */
async function executed(services: Services, p: Paying, deadline: number): Promise<Paying> {
  const retry = { method: 'POST' as const, path: settlePath(p.intent.id) };
  const id = p.claimed?.id ?? (await findExecution(services.db, 'intent', p.intent.id))!.id;
  // The capability gets what is left of the call's time, and no more than a settlement's (the key route's).
  const left = deadline - services.clock.now().getTime();
  const runMs = Math.max(1000, Math.min(left, opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS).innerMs));
  const out = await settleExecution(services, id, runMs, retry, {
    claimed: p.claimed,
    requestId: p.requestId,
  });
  if (out.kind !== 'done') return { ...p, claimed: undefined, pending: pendingReply(out, retry) };
  if (out.recorded && out.record)
    return {
      ...p,
      intent: out.record.intent,
      payment: out.record.payment ?? p.payment,
      claimed: undefined,
      executionId: id,
      answer: out.answer,
      sendNow: true,
      fresh: true,
    };
  // Recorded by another attempt: the intent and its payment as it left them.
  return { ...(await payingOf(services.db, p.payment.id))!, bound: p.bound, requestId: p.requestId };
}

/** A payment and its intent, as stored. */
export async function payingOf(q: Queryable, paymentId: string): Promise<Paying | undefined> {
  const { rows } = await q.query<PaymentWithIntent>(
    'select p.*, to_jsonb(i) as intent_row from payments p join intents i on i.id = p.intent_id where p.id = $1',
    [paymentId],
  );
  return rows[0] && paying(rows[0]);
}

/** An intent settled before this payment came (another way, or by another payment): its stored answer, nothing charged. */
const replay = (r: IntentRow): OpReplyOf<'intentsPay'> => ({
  status: r.answer_status ?? 200,
  answer: json(r.answer),
  replayed: true,
  meta: { intentId: r.id, bound: false },
});

/**
 * 9. The answer as its payer gets it: the capability's (with its meter: what was charged in the end, and the receipt
 * of the payment that moved money), or its refusal, or the 503 that says when to ask again; with the members a paid
 * call carries beside it. A paid answer delivered within the caller's time is owed no more.
 */
async function delivered(
  services: Services,
  ctx: CallContext,
  p: Paying,
  deadline: number,
): Promise<OpReplyOf<'intentsPay'>> {
  const members: PaidCallMembers = { intentId: p.intent.id, bound: p.bound };
  if (p.payment) members.paymentStatus = p.payment.status;
  if (p.pending) return { ...p.pending, meta: members };
  const proven = p.payment && paid(p);
  if (proven) members.receipt = receiptOf(p.payment);
  // Refused at settlement, or expired unused on chain: x402's reason, and a new offer for the same call to pay instead
  // (this intent can no longer be paid).
  else if (p.payment?.reason && refusedStates.includes(p.payment.status)) {
    members.refusal = refusalOf(intentTermsOf(p.intent), p.payment.reason);
    const stored = {
      status: p.intent.answer_status ?? 402,
      answer: json(p.intent.answer) as Blocked,
      replayed: !p.fresh,
    };
    return { ...(await withNewOffer(services, ctx, p.intent, stored)), meta: members };
  }
  // This request's answer carries what it alone may show (a secret, this once); any other is the stored one.
  const answer: PillarAnswer =
    p.fresh && p.answer
      ? withMeter(p.answer, proven ? centsOf(p.intent) : 0, proven ? p.payment : undefined)
      : json(p.intent.answer);
  const now = services.clock.now();
  if (proven && !p.fresh && now.getTime() < deadline) await markDelivered(services.db, p.intent, now);
  return { status: p.intent.answer_status ?? 200, answer, replayed: !p.fresh, meta: members };
}
const centsOf = (r: IntentRow) => Number(r.charged_cents ?? 0);
const refusedStates: string[] = [edgeOf('payment', 'refuse').to, edgeOf('payment', 'expire').to];
