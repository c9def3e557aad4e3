import {
  capabilityByName,
  claimOf,
  claimWith,
  edgeOf,
  isInFlight,
  lifecycles,
  platformEvent,
  problemsOf,
  fromCents,
  newId,
  offerTerms,
  opTimeouts,
  ops,
  withoutSecrets,
  type Capability,
  type OpInput,
  type OpReply,
  type Blocked,
  type IntentValue,
  type PillarAnswer,
  type OpReplyOf,
  type StateOf,
} from '@vcs/contract';
import { provenanceOf, type BulkWrite, type CallContext, type Queryable } from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { answered, iso, offerCapability, record, refusal, refuse, Refused } from './common.ts';
import {
  afterExecution,
  createExecution,
  findExecution,
  pendingReply,
  settleExecution,
  type Finisher,
  type NewExecution,
} from './executions.ts';
import { refundOf, reserveMandate, type Reservation } from './mandates.ts';
import { markDelivered } from './paidCall/paymentRows.ts';
import { intentTermsOf, paymentPending, railOf, receiptOf } from './payments.ts';
import {
  amountOf,
  contextOf,
  intentRow,
  jsonValue,
  originOf,
  storedAnswer,
  storedAnswerOrNull,
  paymentRow,
  type ExecutionRow,
  type IntentRow,
  type PaymentRow,
  type StoredContext,
} from './rows.ts';
import { moved, moveSql, mustMove } from './transition.ts';

/** How long an offer stays settleable (also the x402 maxTimeoutSeconds). */
export const INTENT_TTL_SECONDS = 900;

/** The operations' inputs (contract ops.ts) and the caller's context. */
type CreateIntentRequest = OpInput<'intentsCreate'> & { ctx: CallContext };
type SettleIntentRequest = OpInput<'intentsSettle'> & { ctx: CallContext };

export type { IntentRow };

export const settlePath = (id: string) => `/intents/${id}/settle`;

/** The OFFER envelope for a pending intent: what it costs, the most it can cost, and how to settle it. */
function offerAnswer(
  services: Services,
  ctx: CallContext,
  row: Pick<IntentRow, 'id' | 'capability' | 'price' | 'ceiling' | 'expires_at'>,
  lead = '',
) {
  const price = amountOf(row.price);
  const value = {
    code: 'payment-required' as const,
    message:
      lead +
      (railOf(services).terms.live
        ? `${row.capability} costs ${price.amount} ${price.currency}; ` +
          'pay it with x402 (sign value.x402 or PAYMENT-REQUIRED and send the same request again ' +
          'with PAYMENT-SIGNATURE; no key needed), ' +
          `or settle the intent with POST ${settlePath(row.id)} using your key (simulated in the sandbox)`
        : `${row.capability} costs ${price.amount} ${price.currency}; ` +
          `settle the intent with POST ${settlePath(row.id)} using your key ` +
          '(or send Accept-Price or a Mandate to settle in one round trip)'),
    capability: row.capability,
    price,
    ceiling: amountOf(row.ceiling),
    intent: { id: row.id, status: 'pending' as const, capability: row.capability, expiresAt: iso(row.expires_at)! },
    settle: { method: 'POST' as const, path: settlePath(row.id) },
    next: { method: 'POST' as const, path: settlePath(row.id) },
  };
  return {
    type: 'OFFER' as const,
    answers: 'Offer@1',
    value,
    // What the offer rests on: the intent stored for it (the value restates it with the terms; no second copy).
    evidence: { intent: value.intent },
    provenance: provenanceOf(ctx, services),
    events: [],
    meter: { charged: '0.00', posted: false },
  };
}

/**
 * A new intent, one row of a bulk insert (platform `Db.batch`): the offers of concurrent 402s are written in one
 * statement, one commit (group commit), not one each.
 */
export const INTENT_INSERT: BulkWrite = {
  sql: `insert into intents(
          id, account_id, capability, input, trigger, origin, price, ceiling, ceiling_cents, expires_at, created_at
        )
        select id, account_id, capability, input::jsonb, trigger, origin::jsonb, price::jsonb, ceiling::jsonb,
               ceiling_cents::bigint, expires_at::timestamptz, created_at::timestamptz
        from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                    $9::text[], $10::text[], $11::text[])
          as t(id, account_id, capability, input, trigger, origin, price, ceiling, ceiling_cents, expires_at, created_at)`,
  one: `insert into intents(
          id, account_id, capability, input, trigger, origin, price, ceiling, ceiling_cents, expires_at, created_at
        )
        values ($1, $2, $3, $4::jsonb, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::bigint, $10::timestamptz, $11::timestamptz)`,
};

/**
 * Validate the input to capability `name` and store a pending intent for it: the new row (as the table holds it, its
 * defaults included), or the refusal that says what to fix. The offer gate makes one per call; a v1 payment's first
 * presentation on a route makes its own (paidCall/offered.ts).
 */
export async function insertIntent(
  services: Services,
  ctx: CallContext,
  name: unknown,
  input: unknown,
  origin?: unknown,
): Promise<{ reply: OpReply<Blocked, never> } | { row: IntentRow; capability: Capability }> {
  const c = offerCapability(name);
  if (!c)
    return {
      reply: refusal(
        services,
        ctx,
        'invalid-input',
        `no capability named ${String(name)}; names are noun.verb as in GET /catalog`,
      ),
    };
  const parsed = c.request.safeParse(input ?? {});
  if (!parsed.success) {
    const problems = problemsOf(parsed.error.issues);
    return {
      reply: refusal(
        services,
        ctx,
        'invalid-input',
        `the input to ${c.name} (${c.method} ${c.path}) is not valid; fix each problem listed`,
        { problems, capability: c.name, next: { method: c.method, path: c.path } },
      ),
    };
  }
  const terms = offerTerms(c);
  const now = services.clock.now();
  const trigger = ctx.environment === 'sandbox' ? ctx.trigger : null;
  // Sandbox trigger offer-expired: the intent is born expired, so settling it shows the 410.
  const expires = trigger === 'offer-expired' ? now : new Date(now.getTime() + INTENT_TTL_SECONDS * 1000);
  // Built here, as the insert below writes it and the table's defaults complete it: nothing to read back.
  const row: IntentRow = {
    id: newId('intent'),
    account_id: ctx.account,
    capability: c.name,
    input: parsed.data,
    trigger: trigger ?? null,
    origin: origin ?? null,
    price: terms.price,
    ceiling: terms.ceiling,
    ceiling_cents: terms.ceilingCents,
    status: lifecycles.intent.initial,
    expires_at: expires.toISOString(),
    claimed_at: null,
    executions: 0,
    mandate_principal: null,
    mandate_id: null,
    answer: null,
    answer_status: null,
    created_at: now.toISOString(),
    settled_at: null,
    charged_cents: 0,
    payment_id: null,
    delivered_at: null,
  };
  await services.db.batch([
    {
      bulk: INTENT_INSERT,
      row: [
        row.id,
        row.account_id,
        row.capability,
        JSON.stringify(parsed.data),
        row.trigger,
        origin ? JSON.stringify(origin) : null,
        JSON.stringify(terms.price),
        JSON.stringify(terms.ceiling),
        String(terms.ceilingCents),
        row.expires_at,
        row.created_at,
      ],
    },
  ]);
  return { row, capability: c };
}

/**
 * A new offer for the call an intent that can no longer be paid (expired, failed) was made for: a pending intent for
 * the same capability and input, for the same account. It carries no sandbox trigger (a trigger that ended the old
 * one, offer-declined or fail, would end this one too; a trigger sent with the payment still applies) and no origin
 * (a deal step makes its own offers: paying this one answers the call, not the step).
 */
export async function newOfferFor(services: Services, ctx: CallContext, dead: IntentRow): Promise<IntentRow> {
  const made = await insertIntent(services, { ...ctx, trigger: null }, dead.capability, jsonValue(dead.input));
  // The input parsed once already; only a capability gone from the catalog could refuse it now.
  if ('reply' in made) throw new Refused(made.reply);
  return made.row;
}

/** A new offer answered in place of an intent that can no longer be paid: 402 OFFER, `why` said first. */
export const newOfferReply = (services: Services, ctx: CallContext, row: IntentRow, why: string) =>
  ({
    status: 402,
    answer: offerAnswer(services, ctx, row, `${why}; nothing was charged: this is a new offer for the same call. `),
  }) as const;

/**
 * What a refusal of payment names as the offer to pay now (a 402 must say how to pay: the gateway sends it as
 * PAYMENT-REQUIRED): the intent, pending, and its settlement, which is also the next request.
 */
export function offerMembersOf(row: Pick<IntentRow, 'id' | 'capability' | 'expires_at'>) {
  const settle = { method: 'POST' as const, path: settlePath(row.id) };
  return {
    offer: {
      intent: { id: row.id, status: 'pending' as const, capability: row.capability, expiresAt: iso(row.expires_at)! },
      settle,
    },
    next: settle,
  };
}

/**
 * A stored 402 of an intent that can no longer be paid (its payment refused at settlement, or expired unused on
 * chain), answered again with a new offer for the same call: the intent shown as it is (failed), the offer to pay now
 * beside it and as the next request.
 */
export async function withNewOffer(
  services: Services,
  ctx: CallContext,
  r: IntentRow,
  reply: OpReply<Blocked, never>,
): Promise<OpReply<Blocked, never>> {
  const fresh = await newOfferFor(services, ctx, r);
  const members = offerMembersOf(fresh);
  // The stored message named the old intent's settlement as the next request; it names the new offer's now.
  const said = reply.answer.value.message.replace(/ \(next: (GET|POST) \S+\)$/, '');
  return {
    ...reply,
    answer: {
      ...reply.answer,
      value: {
        ...reply.answer.value,
        message:
          `${said}; intent ${r.id} can no longer be paid: pay the new offer for the same call, intent ${fresh.id}, ` +
          `with POST ${members.next.path} (a key, or an x402 payment for its PAYMENT-REQUIRED)`,
        intent: { id: r.id, status: r.status },
        ...members,
      },
    },
  };
}

/** `sys.commerce.intents.create`: validate the input, store a pending intent, answer 402 OFFER. */
export async function createIntent(services: Services, req: CreateIntentRequest): Promise<OpReplyOf<'intentsCreate'>> {
  const made = await insertIntent(services, req.ctx, req.capability, req.input, req.origin);
  if ('reply' in made) return made.reply;
  return { status: 402, answer: offerAnswer(services, req.ctx, made.row) };
}

/** The status a caller reads: work under way is still pending to it; a pending intent past its life is expired. */
function publicStatus(r: IntentRow, now: Date): IntentValue['status'] {
  if (isInFlight('intent', r.status)) return 'pending';
  if (claimOf('intent', r.status, null, now.getTime()) === 'open' && new Date(r.expires_at) <= now) return 'expired';
  return r.status as IntentValue['status'];
}

function intentView(r: IntentRow, now: Date, payment: PaymentRow | undefined): IntentValue {
  const price = jsonValue(r.price) as { currency: string };
  return {
    id: r.id,
    status: publicStatus(r, now),
    capability: r.capability,
    account: r.account_id,
    price: amountOf(r.price),
    ceiling: amountOf(r.ceiling),
    expiresAt: iso(r.expires_at)!,
    createdAt: iso(r.created_at)!,
    settledAt: iso(r.settled_at),
    origin: originOf(r.origin),
    executions: r.executions,
    settle: { method: 'POST', path: settlePath(r.id) },
    answer: storedAnswerOrNull(r.answer),
    charged: { amount: fromCents(Number(r.charged_cents ?? 0)), currency: price.currency },
    payment: payment ? { ...receiptOf(payment), status: payment.status, reason: payment.reason } : null,
  };
}

export async function findIntent(q: Queryable, id: string, lock = false): Promise<IntentRow | undefined> {
  const { rows } = await q.query<unknown>(`select * from intents where id = $1${lock ? ' for update' : ''}`, [id]);
  return rows[0] === undefined ? undefined : intentRow.parse(rows[0]);
}

/** `sys.commerce.intents.get`: the intent's state; an account-bound intent is shown only to its account. */
export async function getIntent(
  services: Services,
  req: OpInput<'intentsGet'> & { ctx: CallContext },
): Promise<OpReplyOf<'intentsGet'>> {
  const r = await findIntent(services.db, String(req.intentId));
  if (!r)
    return refusal(
      services,
      req.ctx,
      'intent-not-found',
      `no intent ${req.intentId}; intent ids start pi_ and come from a 402 OFFER`,
    );
  if (r.account_id && r.account_id !== req.ctx.account) {
    return refusal(
      services,
      req.ctx,
      'intent-other-account',
      `intent ${r.id} belongs to another account; send the key of the account that made it`,
    );
  }
  // The payment that paid it, else the latest one sent for it (refused, pending): what an operator reconciles.
  const { rows } = await services.db.query<unknown>(
    'select * from payments where intent_id = $1 order by (id = $2) desc, updated_at desc limit 1',
    [r.id, r.payment_id ?? ''],
  );
  const payment = rows[0] === undefined ? undefined : paymentRow.parse(rows[0]);
  return record(services, req.ctx, 'Intent@1', intentView(r, services.clock.now(), payment));
}

/** What taking an intent for a settlement came to: its stored answer, or its execution to run or wait on. */
type Claim =
  | { kind: 'replay'; row: IntentRow }
  /** Past its life: moved to expired in the claim's transaction, refused after it. */
  | { kind: 'expired'; row: IntentRow }
  /** The intent's execution: just created and claimed by this request, or made by an earlier one. */
  | { kind: 'execution'; id: string; claimed?: ExecutionRow };

/** The request that makes a fresh offer for a capability: an agent needs the method and path, not only its name. */
export function callAgain(capability: string) {
  const c = capabilityByName(capability);
  return { method: c?.method ?? 'POST', path: c?.path ?? '/catalog' };
}

/** The intent `id`, or the 404 that says where intent ids come from. */
export async function intentOrRefuse(services: Services, q: Queryable, ctx: CallContext, id: string, lock = false) {
  const r = await findIntent(q, id, lock);
  if (!r) refuse(services, ctx, 'intent-not-found', `no intent ${id}; intent ids start pi_ and come from a 402 OFFER`);
  return r;
}

/** The 410 for an intent past its life: nothing was charged; the capability's route makes a fresh offer. */
export function refuseExpired(services: Services, ctx: CallContext, r: IntentRow): never {
  const again = callAgain(r.capability);
  return refuse(
    services,
    ctx,
    'intent-expired',
    `intent ${r.id} expired at ${iso(r.expires_at)}; nothing was charged: ` +
      `call ${again.method} ${again.path} (${r.capability}) again for a fresh offer`,
    { intent: { id: r.id, status: 'expired' }, next: again },
  );
}

/**
 * Take the intent for a settlement with a key (or Accept-Price, or a Mandate) under a row lock, as the table's claim
 * rule says: final, its answer replayed (or 410 for one expired); in flight, its execution waited on (or, while its
 * x402 payment is being settled, 503 payment-pending); open, pending → settling with its execution made and claimed in
 * the same transaction. Refusals are thrown.
 */
async function claim(
  services: Services,
  q: Queryable,
  req: SettleIntentRequest,
  now: Date,
  timeoutMs: number,
): Promise<Claim> {
  const { ctx } = req;
  const r = await intentOrRefuse(services, q, ctx, String(req.intentId), true);
  if (r.account_id && r.account_id !== ctx.account)
    refuse(
      services,
      ctx,
      'intent-other-account',
      `intent ${r.id} belongs to another account; settle it with the key of the account that made it`,
      { intent: { id: r.id } },
    );
  return claimWith<'intent', Promise<Claim>>('intent', r, now.getTime(), {
    replay: async () => {
      if (r.status === edgeOf('intent', 'expire').to) refuseExpired(services, ctx, r);
      return { kind: 'replay', row: r };
    },
    wait: async () => {
      // An x402 payment holds it: its answer waits on that payment, and it is not settled a second way.
      const ex = r.payment_id ? undefined : await findExecution(q, 'intent', r.id);
      if (ex) return { kind: 'execution', id: ex.id };
      throw new Refused(
        paymentPending(
          intentTermsOf(r),
          'payment-pending',
          `an x402 payment for intent ${r.id} is being settled; read the outcome with GET /intents/${r.id}`,
          2,
        ),
      );
    },
    take: () => taken(services, q, req, r, now, timeoutMs),
  });
}

/** The key route's take of an open intent: expired, declined (sandbox), or claimed with its execution made. */
async function taken(
  services: Services,
  q: Queryable,
  req: SettleIntentRequest,
  r: IntentRow,
  now: Date,
  timeoutMs: number,
): Promise<Claim> {
  const { ctx } = req;
  if (new Date(r.expires_at) <= now) {
    await mustMove(q, 'intent', r.id, r.status, 'expire');
    return { kind: 'expired', row: r };
  }
  const trigger = (ctx.environment === 'sandbox' ? ctx.trigger : null) ?? r.trigger;
  if (trigger === 'offer-declined') {
    const again = callAgain(r.capability);
    const declined = refusal(
      services,
      ctx,
      'offer-declined',
      `the payment for intent ${r.id} was declined (sandbox trigger offer-declined); ` +
        `call ${again.method} ${again.path} (${r.capability}) again for a new offer`,
      { intent: { id: r.id, status: 'failed' }, next: again },
    );
    await mustMove(q, 'intent', r.id, r.status, 'decline', {
      account_id: r.account_id ?? ctx.account,
      answer: JSON.stringify(declined.answer),
      answer_status: declined.status,
      settled_at: now.toISOString(),
    });
    // Declining is its outcome, stored in this transaction: answered, not thrown (a throw would roll it back).
    return { kind: 'replay', row: { ...r, answer: declined.answer, answer_status: declined.status } };
  }
  const reserved: Reservation | null =
    req.mandate !== undefined ? await reserveMandate(services, q, ctx, r, req.mandate, now) : null;
  await mustMove(q, 'intent', r.id, r.status, 'claim', {
    account_id: r.account_id ?? ctx.account,
    claimed_at: now.toISOString(),
    mandate_principal: reserved?.principal ?? null,
    mandate_id: reserved?.id ?? null,
  });
  const ex = await intentExecution(
    q,
    services,
    r,
    { ...ctx, account: r.account_id ?? ctx.account, trigger, mandate: req.mandate },
    timeoutMs,
  );
  return { kind: 'execution', id: ex.id, claimed: ex };
}

/** The intent's one execution (made once, claimed by its maker), run under the settling caller's stored context. */
export const intentExecution = (
  q: Queryable,
  services: Services,
  r: IntentRow,
  ctx: Omit<StoredContext, 'intentId'>,
  timeoutMs: number,
) => createExecution(q, services, newIntentExecution(r, ctx), timeoutMs);

/** The one execution of an intent's capability: its input and origin, and who it runs for. */
export const newIntentExecution = (r: IntentRow, ctx: Omit<StoredContext, 'intentId'>): NewExecution => ({
  source: 'intent',
  sourceId: r.id,
  capability: r.capability,
  input: jsonValue(r.input),
  origin: jsonValue(r.origin),
  ctx: { ...ctx, intentId: r.id },
});

/**
 * `sys.commerce.intents.settle`: execute the intent's capability exactly once. The claim (pending → settling, its
 * execution created) is taken under `select … for update`; the execution runs with no lock held (executions.ts),
 * and its answer is stored with the Intent.settled event in one transaction. A second settle replays the answer;
 * one that comes while the outcome is unknown gets a 503 with Retry-After, never a second run.
 */
export async function settleIntent(services: Services, req: SettleIntentRequest): Promise<OpReplyOf<'intentsSettle'>> {
  const timeoutMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  return answered(async () => {
    if (!req.ctx.account)
      refuse(
        services,
        req.ctx,
        'key-required',
        `settling intent ${req.intentId} needs a key (Authorization: Bearer <key>; mint one with POST /keys) ` +
          'or an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT) for its offer',
        { next: { method: 'POST', path: '/keys' } },
      );
    const got = await services.db.tx((q) => claim(services, q, req, services.clock.now(), timeoutMs));
    if (got.kind === 'expired') refuseExpired(services, req.ctx, got.row);
    if (got.kind === 'replay') {
      const stored = { status: got.row.answer_status ?? 200, answer: storedAnswer(got.row.answer), replayed: true };
      // A 402 stored as the answer (its x402 payment refused at settlement, or expired unused): a 402 says how to pay.
      if (stored.status === 402 && stored.answer.type === 'BLOCKED')
        return withNewOffer(services, req.ctx, got.row, { ...stored, answer: stored.answer });
      return stored;
    }
    return answerOfExecution(services, got.id, got.claimed, req.ctx.requestId, timeoutMs, String(req.intentId));
  });
}

/** Run (or wait on) an intent's execution and answer with it: the capability's answer, or why there is none yet. */
export async function answerOfExecution(
  services: Services,
  executionId: string,
  claimed: ExecutionRow | undefined,
  requestId: string,
  timeoutMs: number,
  intentId: string,
): Promise<OpReply<PillarAnswer, never>> {
  const retry = { method: 'POST' as const, path: settlePath(intentId) };
  const out = await settleExecution(services, executionId, timeoutMs, retry, {
    claimed,
    requestId,
    finish: finishIntent,
  });
  if (out.kind !== 'done') return pendingReply(out, retry);
  // Recorded by this request: the finisher's answer, with its meter (and any secret, this once). Otherwise the
  // intent's stored answer, recorded with the execution in one transaction.
  if (out.recorded) return { status: out.status, answer: out.answer, replayed: out.replayed };
  const r = await findIntent(services.db, intentId);
  return {
    status: r?.answer_status ?? out.status,
    answer: storedAnswerOrNull(r?.answer) ?? out.answer,
    replayed: true,
  };
}

/**
 * An answer with its meter: what the payer was charged in the end. An x402 payment proven on chain charged its amount
 * (test money on a test network included) and names its receipt; a simulated settlement (the key route, Accept-Price,
 * a Mandate in the sandbox) and a paid answer not worth its price (its payment voided) charged nothing: 0.00.
 */
export function withMeter<A extends PillarAnswer>(answer: A, cents: number, payment?: PaymentRow): A {
  return {
    ...answer,
    meter: { charged: fromCents(cents), posted: true, ...(payment ? { payment: receiptOf(payment) } : {}) },
  };
}

/** What an intent's Intent.settled@1 tells of it. */
export type SettledIntent = Pick<IntentRow, 'id' | 'account_id' | 'capability' | 'input' | 'origin'>;

/** The intent's Intent.settled@1: its answer's kind and what it charged, with its origin (a deal step's). */
export function settledEvent(
  services: Services,
  r: SettledIntent,
  ex: { id: string; environment: CallContext['environment'] },
  answer: PillarAnswer,
  cents: number,
) {
  const input = jsonValue(r.input) as { vin?: unknown };
  return platformEvent(
    'Intent.settled@1',
    {
      occurredAt: services.clock.now().toISOString(),
      account: r.account_id,
      capability: r.capability,
      vin: typeof answer.value.vin === 'string' ? answer.value.vin : typeof input.vin === 'string' ? input.vin : null,
      simulated: ex.environment === 'sandbox',
    },
    {
      intentId: r.id,
      capability: r.capability,
      origin: originOf(r.origin),
      answerType: answer.type,
      executionId: ex.id,
      charged: fromCents(cents),
    },
  );
}

/**
 * An intent's execution answered and the intent is settled (or failed) by it now, charging nothing: its move (guarded
 * by the execution's own), its Intent.settled@1, the answer as stored (with its 0.00 meter) and the table's event.
 */
export function settledNow(services: Services, ex: ExecutionRow, answer: PillarAnswer, answerStatus: number) {
  const stored = withMeter(answer, 0);
  const event = answer.type !== 'BLOCKED' ? ('succeed' as const) : ('fail' as const);
  const intent = moveSql(
    'intent',
    ex.source_id,
    event,
    {
      answer: withoutSecrets(JSON.stringify(stored)),
      answer_status: answerStatus,
      settled_at: services.clock.now().toISOString(),
      executions: 1,
    },
    afterExecution,
  );
  const settled = settledEvent(
    services,
    intentOf(ex),
    { id: ex.id, environment: contextOf(ex).environment },
    answer,
    0,
  );
  return { intent, settled, stored, event };
}

/**
 * An intent settled with a key (or Accept-Price, or a Mandate): its execution answered, in the statement that records
 * it. It is settled (or failed) now, charging nothing (a simulated settlement); a failed answer gives back what a
 * mandate reserved for it. (A paid intent's execution is charged or voided by the paid call: paidCall/executed.ts.)
 */
export const finishIntent: Finisher = (services, ex, answer, answerStatus) => {
  // Only the attempt that records the execution (its move wins) finishes the intent, which is then in flight: its
  // move must happen (`required`), or the whole record fails unwritten.
  const now = settledNow(services, ex, answer, answerStatus);
  return {
    parts: {
      intent: now.intent,
      // A failed answer gives back what a mandate reserved for it.
      ...(now.event === 'fail' && { refunded: refundOf('intent') }),
    },
    required: ['intent'],
    settles: true,
    events: [now.settled],
    finished: (rows) => ({
      answer: now.stored,
      // Parsed by its part (moveSql's).
      record: { intent: moved(rows.intent as IntentRow | undefined, 'intent', IN_FLIGHT, now.event) },
    }),
  };
};

/** The states an intent's execution finishes it from (for the error a missed move throws). */
export const IN_FLIGHT = lifecycles.intent.inFlight.join('|');

/** What an intent's Intent.settled@1 tells, as its execution carries it (made from the intent: intentExecution). */
const intentOf = (ex: ExecutionRow): SettledIntent => ({
  id: ex.source_id,
  account_id: contextOf(ex).account,
  capability: ex.capability,
  input: ex.input,
  origin: ex.origin,
});

/**
 * The latest intent for a capability ($1) and input ($2) whose payment `payer` ($3) made and that reached state $4:
 * read through the wallet's own payments (`payments_payer`, commerce migration 011), however long the history.
 */
export const REREAD_SQL = `select i.* from intents i join payments p on p.id = i.payment_id
   where i.capability = $1 and i.input = $2::jsonb and lower(p.payer) = lower($3) and p.status = $4
   order by i.settled_at desc limit 1`;

/**
 * `sys.commerce.intents.reread`: the stored answer of the latest intent for this capability and input that
 * `payer` paid (x402 sign-in-with-x: the gateway verified the wallet's proof). Never runs anything.
 */
export async function rereadPaid(
  services: Services,
  req: OpInput<'intentsReread'> & { ctx: CallContext },
): Promise<OpReplyOf<'intentsReread'>> {
  const c = offerCapability(req.capability);
  const input = c?.request.safeParse(req.input);
  // Paid: its payment proven on chain (the state `prove` moves a payment to), so its intent collected.
  const { rows } = input?.success
    ? await services.db.query<unknown>(REREAD_SQL, [
        req.capability,
        JSON.stringify(input.data),
        req.payer,
        edgeOf('payment', 'prove').to,
      ])
    : { rows: [] };
  const r = rows[0] === undefined ? undefined : intentRow.parse(rows[0]);
  if (!r)
    return refusal(
      services,
      req.ctx,
      'intent-not-found',
      `wallet ${req.payer} has paid for no answer of ${req.capability} with this input; pay the offer to get one`,
    );
  await markDelivered(services.db, r, services.clock.now());
  return { status: r.answer_status ?? 200, answer: storedAnswer(r.answer), replayed: true };
}
