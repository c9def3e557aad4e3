import { createHash } from 'node:crypto';
import {
  capabilityByName,
  platformEvent,
  problemsOf,
  canonicalJson,
  checkMandate,
  fromCents,
  mandate as mandateSchema,
  newId,
  offerTerms,
  opTimeouts,
  ops,
  toCents,
  withoutSecrets,
  type EventAnswerType,
  type Mandate,
  type OpInput,
  type OpReply,
} from '@vcs/contract';
import { centsOfAtomic, provenanceOf, writeEvents, type CallContext, type Queryable } from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { iso, json, offerCapability, record, refusal } from './common.ts';
import {
  createExecution,
  findExecution,
  onExecutionFinished,
  pendingReply,
  runExecution,
  settleExecution,
  type ExecutionRow,
} from './executions.ts';
import {
  bindPayment,
  checkPayment,
  intentTermsOf,
  paymentHeader,
  paymentPending,
  paymentRefusal,
  railOf,
  receiptOf,
  reconcilePayment,
  settlePayment,
  type Drive,
  type IntentTerms,
  type PaymentRow,
} from './payments.ts';

/** How long an offer stays settleable (also the x402 maxTimeoutSeconds). */
export const INTENT_TTL_SECONDS = 900;

/** The operations' inputs (contract ops.ts) and the caller's context. */
type CreateIntentRequest = OpInput<'intentsCreate'> & { ctx: CallContext };
type SettleIntentRequest = OpInput<'intentsSettle'> & { ctx: CallContext };

interface IntentRow {
  id: string;
  account_id: string | null;
  capability: string;
  input: unknown;
  trigger: string | null;
  origin: unknown;
  price: unknown;
  ceiling: unknown;
  ceiling_cents: string | number;
  status: string;
  expires_at: string | Date;
  claimed_at: string | Date | null;
  executions: number;
  mandate_principal: string | null;
  mandate_id: string | null;
  answer: unknown;
  answer_status: number | null;
  created_at: string | Date;
  settled_at: string | Date | null;
  charged_cents: string | number | null;
  payment_id: string | null;
}

const settlePath = (id: string) => `/intents/${id}/settle`;

/** The OFFER envelope for a pending intent: what it costs, the most it can cost, and how to settle it. */
function offerAnswer(
  services: Services,
  ctx: CallContext,
  row: Pick<IntentRow, 'id' | 'capability' | 'price' | 'ceiling' | 'expires_at'>,
) {
  const price = json(row.price) as { amount: string; currency: string };
  const value = {
    code: 'payment-required' as const,
    message: railOf(services).terms.live
      ? `${row.capability} costs ${price.amount} ${price.currency}; ` +
        'pay it with x402 (sign value.x402 or PAYMENT-REQUIRED and send the same request again ' +
        'with PAYMENT-SIGNATURE; no key needed), ' +
        `or settle the intent with POST ${settlePath(row.id)} using your key (simulated in the sandbox)`
      : `${row.capability} costs ${price.amount} ${price.currency}; ` +
        `settle the intent with POST ${settlePath(row.id)} using your key ` +
        '(or send Accept-Price or a Mandate to settle in one round trip)',
    capability: row.capability,
    price,
    ceiling: json(row.ceiling),
    intent: { id: row.id, status: 'pending' as const, capability: row.capability, expiresAt: iso(row.expires_at)! },
    settle: { method: 'POST' as const, path: settlePath(row.id) },
    next: { method: 'POST' as const, path: settlePath(row.id) },
  };
  return {
    type: 'OFFER',
    answers: 'Offer@1',
    value,
    evidence: value,
    provenance: provenanceOf(ctx, services),
    events: [],
    meter: { charged: '0.00', posted: false },
  };
}

/** `sys.commerce.intents.create`: validate the input, store a pending intent, answer 402 OFFER. */
export async function createIntent(services: Services, req: CreateIntentRequest): Promise<OpReply> {
  const ctx = req.ctx;
  const c = offerCapability(req.capability);
  if (!c)
    return refusal(
      services,
      ctx,
      'invalid-input',
      `no capability named ${String(req.capability)}; names are noun.verb as in GET /catalog`,
    );
  const parsed = c.request.safeParse(req.input ?? {});
  if (!parsed.success) {
    const problems = problemsOf(parsed.error.issues);
    return refusal(
      services,
      ctx,
      'invalid-input',
      `the input to ${c.name} (${c.method} ${c.path}) is not valid; fix each problem listed`,
      { problems, capability: c.name, next: { method: c.method, path: c.path } },
    );
  }
  const terms = offerTerms(c);
  const now = services.clock.now();
  const trigger = ctx.environment === 'sandbox' ? ctx.trigger : null;
  // Sandbox trigger offer-expired: the intent is born expired, so settling it shows the 410.
  const expires = trigger === 'offer-expired' ? now : new Date(now.getTime() + INTENT_TTL_SECONDS * 1000);
  const row = {
    id: newId('intent'),
    capability: c.name,
    price: terms.price,
    ceiling: terms.ceiling,
    expires_at: expires,
  };
  await services.db.query(
    `insert into intents(
       id, account_id, capability, input, trigger, origin, price, ceiling, ceiling_cents, expires_at, created_at
     )
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
    [
      row.id,
      ctx.account,
      c.name,
      JSON.stringify(parsed.data),
      trigger,
      req.origin ? JSON.stringify(req.origin) : null,
      JSON.stringify(terms.price),
      JSON.stringify(terms.ceiling),
      terms.ceilingCents,
      expires.toISOString(),
      now.toISOString(),
    ],
  );
  return { status: 402, answer: offerAnswer(services, ctx, row) };
}

function publicStatus(r: IntentRow, now: Date): string {
  if (r.status === 'settling') return 'pending';
  if (r.status === 'pending' && new Date(r.expires_at) <= now) return 'expired';
  return r.status;
}

function intentView(r: IntentRow, now: Date, payment: PaymentRow | undefined) {
  const price = json(r.price) as { currency: string };
  return {
    id: r.id,
    status: publicStatus(r, now),
    capability: r.capability,
    account: r.account_id,
    price: json(r.price),
    ceiling: json(r.ceiling),
    expiresAt: iso(r.expires_at),
    createdAt: iso(r.created_at),
    settledAt: iso(r.settled_at),
    origin: json(r.origin) ?? null,
    executions: r.executions,
    settle: { method: 'POST', path: settlePath(r.id) },
    answer: r.answer ? json(r.answer) : null,
    charged: { amount: fromCents(Number(r.charged_cents ?? 0)), currency: price.currency },
    payment: payment ? { ...receiptOf(payment), status: payment.status, reason: payment.reason } : null,
  };
}

async function findIntent(q: Queryable, id: string, lock = false): Promise<IntentRow | undefined> {
  const { rows } = await q.query<IntentRow>(`select * from intents where id = $1${lock ? ' for update' : ''}`, [id]);
  return rows[0];
}

/** `sys.commerce.intents.get`: the intent's state; an account-bound intent is shown only to its account. */
export async function getIntent(
  services: Services,
  req: OpInput<'intentsGet'> & { ctx: CallContext },
): Promise<OpReply> {
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
  const { rows } = await services.db.query<PaymentRow>(
    'select * from payments where intent_id = $1 order by (id = $2) desc, updated_at desc limit 1',
    [r.id, r.payment_id ?? ''],
  );
  return record(services, req.ctx, 'Intent@1', intentView(r, services.clock.now(), rows[0]));
}

const digestOf = (m: Mandate) => createHash('sha256').update(canonicalJson(m)).digest('hex');

type Claim =
  | { kind: 'reply'; reply: OpReply }
  | { kind: 'replay'; row: IntentRow }
  /** The intent's execution: just created and claimed by this request, or made by an earlier one. */
  | { kind: 'execution'; id: string; claimed?: ExecutionRow };

/** What a settlement took from a mandate's ledger, given back if it fails. */
interface Reservation {
  account: string;
  principal: string;
  id: string;
  cents: number;
}

/** The request that makes a fresh offer for a capability: an agent needs the method and path, not only its name. */
function callAgain(capability: string) {
  const c = capabilityByName(capability);
  return { method: c?.method ?? 'POST', path: c?.path ?? '/catalog' };
}

/**
 * Take the intent for this settlement under a row lock: refuse, replay its answer, or hand over its execution —
 * the one made now (pending → settling, the execution created and claimed in the same transaction) or the one an
 * earlier settlement made.
 */
async function claim(
  services: Services,
  q: Queryable,
  req: SettleIntentRequest,
  now: Date,
  timeoutMs: number,
): Promise<Claim> {
  const { ctx } = req;
  const r = await findIntent(q, String(req.intentId), true);
  if (!r)
    return {
      kind: 'reply',
      reply: refusal(
        services,
        ctx,
        'intent-not-found',
        `no intent ${req.intentId}; intent ids start pi_ and come from a 402 OFFER`,
      ),
    };
  if (r.account_id && r.account_id !== ctx.account) {
    return {
      kind: 'reply',
      reply: refusal(
        services,
        ctx,
        'intent-other-account',
        `intent ${r.id} belongs to another account; settle it with the key of the account that made it`,
        { intent: { id: r.id } },
      ),
    };
  }
  if (r.status === 'settled' || r.status === 'failed') return { kind: 'replay', row: r };
  if (r.status === 'settling') {
    const ex = await findExecution(q, 'intent', r.id);
    if (ex) return { kind: 'execution', id: ex.id };
  }
  // A payment on its way for this intent is not settled a second way (money would move for an answer given already).
  const paying = await q.query<{ id: string }>(
    `select id from payments where intent_id = $1 and status in ('verifying', 'settling', 'unknown')`,
    [r.id],
  );
  if (paying.rows[0])
    return {
      kind: 'reply',
      reply: paymentPending(
        intentTermsOf(r),
        'payment-pending',
        `an x402 payment (${paying.rows[0].id}) for intent ${r.id} is being settled; ` +
          `read the outcome with GET /intents/${r.id}`,
        2,
      ),
    };
  if (r.status === 'expired' || new Date(r.expires_at) <= now) {
    await q.query(`update intents set status = 'expired' where id = $1`, [r.id]);
    const again = callAgain(r.capability);
    return {
      kind: 'reply',
      reply: refusal(
        services,
        ctx,
        'intent-expired',
        `intent ${r.id} expired at ${iso(r.expires_at)}; ` +
          `call ${again.method} ${again.path} (${r.capability}) again for a fresh offer`,
        { intent: { id: r.id, status: 'expired' }, next: again },
      ),
    };
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
    await q.query(
      `update intents
       set status = 'failed', account_id = coalesce(account_id, $2), answer = $3, answer_status = $4, settled_at = $5
       where id = $1`,
      [r.id, ctx.account, JSON.stringify(declined.answer), declined.status, now.toISOString()],
    );
    return { kind: 'reply', reply: declined };
  }
  let reserved: Reservation | null = null;
  if (req.mandate !== undefined) {
    // Spend is the presenting account's (docs/money.md): the same principal and id under another account is another
    // ledger.
    const account = r.account_id ?? ctx.account!;
    const m = mandateSchema.safeParse(req.mandate);
    if (!m.success)
      return {
        kind: 'reply',
        reply: refusal(services, ctx, 'invalid-mandate', 'the mandate does not match the Mandate schema'),
      };
    const price = json(r.price) as { currency: string };
    const violation = checkMandate(m.data, {
      capability: r.capability,
      ceilingCents: Number(r.ceiling_cents),
      currency: price.currency,
      now,
    });
    if (violation)
      return {
        kind: 'reply',
        reply: refusal(services, ctx, violation.code, violation.message, {
          ...(violation.tripwire ? { tripwire: violation.tripwire } : {}),
          intent: { id: r.id, status: 'pending' },
        }),
      };
    const cents = Number(r.ceiling_cents);
    const ceilingCents = toCents(m.data.ceiling.amount) ?? 0;
    await q.query(
      `insert into mandate_spend(account_id, principal, mandate_id, digest, currency, ceiling_cents)
       values ($6,$1,$2,$3,$4,$5) on conflict do nothing`,
      [m.data.principal, m.data.id, digestOf(m.data), m.data.ceiling.currency, ceilingCents, account],
    );
    const held = await q.query<{ digest: string; spent_cents: string; ceiling_cents: string }>(
      `select digest, spent_cents, ceiling_cents from mandate_spend
       where account_id = $3 and principal = $1 and mandate_id = $2 for update`,
      [m.data.principal, m.data.id, account],
    );
    if (held.rows[0]!.digest !== digestOf(m.data)) {
      return {
        kind: 'reply',
        reply: refusal(
          services,
          ctx,
          'invalid-mandate',
          `mandate ${m.data.id} of ${m.data.principal} was first used with other terms; ` +
            'a changed mandate needs a new id',
        ),
      };
    }
    const took = await q.query(
      `update mandate_spend set spent_cents = spent_cents + $3, updated_at = now()
       where account_id = $4 and principal = $1 and mandate_id = $2 and spent_cents + $3 <= ceiling_cents`,
      [m.data.principal, m.data.id, cents, account],
    );
    if (took.rowCount === 0) {
      const spent = Number(held.rows[0]!.spent_cents);
      return {
        kind: 'reply',
        reply: refusal(
          services,
          ctx,
          'mandate-ceiling-exceeded',
          `${r.capability} can cost ${fromCents(cents)} but mandate ${m.data.id} has ` +
            `${fromCents(Number(held.rows[0]!.ceiling_cents) - spent)} of its ` +
            `${m.data.ceiling.amount} ${m.data.ceiling.currency} left; ask the principal for a larger ceiling`,
          {
            mandate: {
              id: m.data.id,
              ceiling: m.data.ceiling,
              spent: { amount: fromCents(spent), currency: m.data.ceiling.currency },
            },
            intent: { id: r.id, status: 'pending' },
          },
        ),
      };
    }
    reserved = { account, principal: m.data.principal, id: m.data.id, cents };
  }
  await q.query(
    `update intents
     set status = 'settling', account_id = coalesce(account_id, $2), claimed_at = $3, mandate_principal = $4,
       mandate_id = $5
     where id = $1`,
    [r.id, ctx.account, now.toISOString(), reserved?.principal ?? null, reserved?.id ?? null],
  );
  const ex = await createExecution(
    q,
    services,
    {
      source: 'intent',
      sourceId: r.id,
      capability: r.capability,
      input: json(r.input),
      origin: json(r.origin),
      ctx: { ...ctx, account: r.account_id ?? ctx.account, trigger, intentId: r.id, mandate: req.mandate },
    },
    timeoutMs,
  );
  return { kind: 'execution', id: ex.id, claimed: ex };
}

const refund = (q: Queryable, res: Reservation) =>
  q.query(
    `update mandate_spend set spent_cents = spent_cents - $3, updated_at = now()
     where account_id = $4 and principal = $1 and mandate_id = $2`,
    [res.principal, res.id, res.cents, res.account],
  );

/**
 * `sys.commerce.intents.settle`: execute the intent's capability exactly once. The claim (pending → settling, its
 * execution created) is taken under `select … for update`; the execution runs with no lock held (executions.ts),
 * and its answer is stored with the Intent.settled event in one transaction. A second settle replays the answer;
 * one that comes while the outcome is unknown gets a 503 with Retry-After, never a second run.
 */
export async function settleIntent(services: Services, req: SettleIntentRequest): Promise<OpReply> {
  const timeoutMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  if (req.payment !== undefined) return settleByPayment(services, req, timeoutMs);
  if (!req.ctx.account) {
    return refusal(
      services,
      req.ctx,
      'key-required',
      `settling intent ${req.intentId} needs a key (Authorization: Bearer <key>; mint one with POST /keys) ` +
        'or an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT) for its offer',
      { next: { method: 'POST', path: '/keys' } },
    );
  }
  const got = await services.db.tx((q) => claim(services, q, req, services.clock.now(), timeoutMs));
  if (got.kind === 'reply') return got.reply;
  if (got.kind === 'replay')
    return { status: got.row.answer_status ?? 200, answer: json(got.row.answer), replayed: true };
  return answerOfExecution(services, got.id, got.claimed, req.ctx.requestId, timeoutMs, String(req.intentId));
}

/** Run (or wait on) an intent's execution and answer with it: the capability's answer, or why there is none yet. */
export async function answerOfExecution(
  services: Services,
  executionId: string,
  claimed: ExecutionRow | undefined,
  requestId: string,
  timeoutMs: number,
  intentId: string,
): Promise<OpReply> {
  const retry = { method: 'POST' as const, path: settlePath(intentId) };
  const out = await settleExecution(services, executionId, timeoutMs, retry, { claimed, requestId });
  if (out.kind !== 'done') return pendingReply(out, retry);
  // Recorded by this request: the finisher's answer, with its meter. Otherwise the intent's stored answer.
  if (out.recorded) return { status: out.status, answer: out.answer, replayed: out.replayed };
  const { rows } = await services.db.query<IntentRow>('select * from intents where id = $1', [intentId]);
  const r = rows[0];
  if (r?.answer) return { status: r.answer_status ?? out.status, answer: json(r.answer), replayed: true };
  return {
    status: out.status,
    answer: withMeter(out.answer, r, await paymentOfIntent(services.db, r)),
    replayed: out.replayed,
  };
}

/**
 * The meter of a settled answer: what this settlement collected. A payment taken on the configured network is
 * money that moved (test money on a test network included); a simulated settlement (the key route, Accept-Price,
 * a Mandate in the sandbox) collects nothing: 0.00.
 */
function withMeter(
  answer: Record<string, unknown>,
  r: IntentRow | undefined,
  payment?: PaymentRow,
): Record<string, unknown> {
  const cents = Number(r?.charged_cents ?? 0);
  return {
    ...answer,
    meter: { charged: fromCents(cents), posted: true, ...(payment ? { payment: receiptOf(payment) } : {}) },
  };
}

const paymentOfIntent = async (q: Queryable, r: IntentRow | undefined) =>
  r?.payment_id
    ? (await q.query<PaymentRow>('select * from payments where id = $1', [r.payment_id])).rows[0]
    : undefined;

/**
 * Settle by x402 payment: check it against the offer, bind it to this intent, verify and settle it on chain through
 * the facilitator, and only then run the execution. A payment whose outcome is unknown answers 503 with Retry-After,
 * never 402; its retry (or the reconciler) finds out from the chain.
 */
async function settleByPayment(services: Services, req: SettleIntentRequest, timeoutMs: number): Promise<OpReply> {
  const { ctx } = req;
  const rail = railOf(services);
  if (!rail.terms.live) {
    return refusal(
      services,
      ctx,
      'payments-not-accepted',
      'this deployment takes no x402 payments (no X402_FACILITATOR_URL is set); ' +
        `settle intent ${req.intentId} with POST ${settlePath(String(req.intentId))} and a key`,
      { next: { method: 'POST', path: settlePath(String(req.intentId)) } },
    );
  }
  const parsed = paymentHeader.safeParse(req.payment);
  if (!parsed.success) {
    return refusal(
      services,
      ctx,
      'payment-invalid',
      'the payment is not an x402 exact-scheme EVM payment (v2 PAYMENT-SIGNATURE or v1 X-PAYMENT: ' +
        'base64 JSON with payload.signature and payload.authorization); fix each problem listed',
      { problems: problemsOf(parsed.error.issues, 'header'), x402Error: 'invalid_payload' },
    );
  }
  const p = parsed.data;
  const now = services.clock.now();
  const step = await services.db.tx(
    async (
      q,
    ): Promise<
      { reply: OpReply } | { execution: string } | { payment: PaymentRow; fresh: boolean; t: IntentTerms }
    > => {
      const r = await findIntent(q, String(req.intentId), true);
      if (!r)
        return {
          reply: refusal(
            services,
            ctx,
            'intent-not-found',
            `no intent ${req.intentId}; intent ids start pi_ and come from a 402 OFFER`,
          ),
        };
      if (r.account_id && r.account_id !== ctx.account)
        return {
          reply: refusal(
            services,
            ctx,
            'intent-other-account',
            `intent ${r.id} belongs to another account; pay it with the key of the account that made it, ` +
              'or without a key for an offer made without one',
            { intent: { id: r.id } },
          ),
        };
      if (r.status === 'settled' || r.status === 'failed') {
        return { reply: { status: r.answer_status ?? 200, answer: json(r.answer), replayed: true } };
      }
      if (r.status === 'settling') {
        const ex = await findExecution(q, 'intent', r.id);
        if (ex) return { execution: ex.id };
      }
      const t = intentTermsOf(r);
      const bad = checkPayment(rail, t, p, now.getTime());
      if (bad) return { reply: paymentRefusal(services, ctx, t, bad) };
      const b = await bindPayment(q, services, t, p);
      if ('code' in b) return { reply: paymentRefusal(services, ctx, t, b) };
      if ('pending' in b)
        return {
          reply: paymentPending(
            t,
            'payment-pending',
            `another payment (${b.pending.id}) for intent ${t.id} is being settled; ` +
              `read the outcome with GET /intents/${t.id}`,
            2,
          ),
        };
      // An offer past its time takes no new payment; one already bound (its outcome pending) is still seen through.
      if (b.fresh && (r.status === 'expired' || new Date(r.expires_at) <= now)) {
        await q.query('delete from payments where id = $1', [b.row.id]);
        const again = callAgain(r.capability);
        return {
          reply: refusal(
            services,
            ctx,
            'intent-expired',
            `intent ${r.id} expired at ${iso(r.expires_at)}; nothing was charged: ` +
              `call ${again.method} ${again.path} (${r.capability}) again for a fresh offer`,
            { intent: { id: r.id, status: 'expired' }, next: again },
          ),
        };
      }
      return { payment: b.row, fresh: b.fresh, t };
    },
  );
  if ('reply' in step) return step.reply;
  if ('execution' in step)
    return answerOfExecution(services, step.execution, undefined, ctx.requestId, timeoutMs, String(req.intentId));
  const { payment: row, t } = step;
  let drive: Drive | null;
  if (row.status === 'settled') drive = { kind: 'settled', transaction: row.transaction };
  // Straight to settle: the facilitator verifies before it settles, and nothing runs before the chain has the
  // transfer, so a separate /verify round trip would only repeat its signature check and simulation.
  else if (step.fresh) drive = await settlePayment(services, row, true);
  else if (row.status === 'unknown' || now.getTime() - new Date(row.updated_at).getTime() > STALE_PAYMENT_MS)
    drive = await reconcilePayment(services, row);
  else
    return paymentPending(
      t,
      'payment-pending',
      `this payment for intent ${t.id} is being settled by another request now; ` +
        'send the same request again in a moment to read the answer',
      1,
    );
  if (drive.kind === 'refused') return paymentRefusal(services, ctx, t, drive.refusal);
  if (drive.kind === 'unavailable') return paymentPending(t, 'payment-unavailable', drive.message, 2);
  if (drive.kind === 'unknown')
    return paymentPending(
      t,
      'payment-pending',
      `${drive.message}; it will not be charged twice: ` +
        `send the same request again in a few seconds (or read GET /intents/${t.id})`,
      2,
    );
  const ex = await paid(services, row, drive.transaction, ctx, timeoutMs);
  return answerOfExecution(services, ex.id, ex.claimed, ctx.requestId, timeoutMs, t.id);
}

/** A payment older than this in `verifying` or `settling` is taken to have lost its process and is reconciled. */
const STALE_PAYMENT_MS = 30_000;

/**
 * The payment settled on chain: record it, move the intent to settling with what it collected, and make its
 * execution.
 */
async function paid(
  services: Services,
  row: PaymentRow,
  transaction: string | null,
  ctx: Pick<CallContext, 'account' | 'keyId' | 'environment' | 'trigger'>,
  timeoutMs: number,
): Promise<{ id: string; claimed?: ExecutionRow }> {
  return services.db.tx(async (q) => {
    await q.query(
      `update payments set status = 'settled', transaction = coalesce($2, transaction), updated_at = $3 where id = $1`,
      [row.id, transaction, services.clock.now().toISOString()],
    );
    const r = (await findIntent(q, row.intent_id, true))!;
    if (r.status !== 'pending') {
      // Settled already, or settling under its execution (a retry, the reconciler): that execution.
      const existing = await findExecution(q, 'intent', r.id);
      if (existing) return { id: existing.id };
    }
    await q.query(
      `update intents
       set status = 'settling', account_id = coalesce(account_id, $2), claimed_at = $3, charged_cents = $4,
         payment_id = $5
       where id = $1`,
      [r.id, ctx.account, services.clock.now().toISOString(), centsOfAtomic(row.amount_atomic), row.id],
    );
    const trigger = (ctx.environment === 'sandbox' ? ctx.trigger : null) ?? r.trigger;
    const ex = await createExecution(
      q,
      services,
      {
        source: 'intent',
        sourceId: r.id,
        capability: r.capability,
        input: json(r.input),
        origin: json(r.origin),
        ctx: {
          account: r.account_id ?? ctx.account,
          keyId: ctx.keyId,
          environment: ctx.environment,
          trigger,
          intentId: r.id,
        },
      },
      timeoutMs,
    );
    return { id: ex.id, claimed: ex };
  });
}

/**
 * The payments reconciler: a payment whose settlement outcome is unknown (or whose process died mid-way) is decided
 * from the chain; one that turns out settled runs its intent's execution, as its own retry would have.
 */
export async function reconcileOpenPayments(services: Services): Promise<void> {
  if (!railOf(services).terms.live) return;
  const stale = new Date(services.clock.now().getTime() - STALE_PAYMENT_MS).toISOString();
  const { rows } = await services.db.query<PaymentRow>(
    `select * from payments
     where status = 'unknown' or (status in ('settling', 'settled') and updated_at < $1)
     order by updated_at limit 20`,
    [stale],
  );
  for (const row of rows) {
    const r = await findIntent(services.db, row.intent_id);
    // Its execution exists: the executions reconciler has it.
    if (row.status === 'settled' && r?.status !== 'pending') continue;
    const drive =
      row.status === 'settled'
        ? { kind: 'settled' as const, transaction: row.transaction }
        : await reconcilePayment(services, row);
    if (drive.kind !== 'settled' || !r) continue;
    const stored = { account: r.account_id, keyId: null, environment: 'sandbox' as const, trigger: r.trigger };
    const ex = await paid(services, row, drive.transaction, stored, services.settings.BUS_TIMEOUT_MS);
    if (ex.claimed) await runExecution(services, ex.id, services.settings.BUS_TIMEOUT_MS, { claimed: ex.claimed });
  }
}

/**
 * An intent's execution finished: the intent is settled (or failed) with its answer and event, in the same
 * transaction.
 */
onExecutionFinished('intent', async (q, services, ex, answer, answerStatus) => {
  // The intent and the payment that paid it, in one look.
  const { rows } = await q.query<IntentRow & { payment_row: PaymentRow | null }>(
    `select i.*, to_jsonb(p) as payment_row
     from intents i left join payments p on p.id = i.payment_id
     where i.id = $1 for update of i`,
    [ex.source_id],
  );
  const r = rows[0]!;
  const type = String(answer.type);
  const status = type === 'OK' || type === 'EMPTY' ? 'settled' : 'failed';
  const now = services.clock.now().toISOString();
  const stored = withMeter(answer, r, json(r.payment_row) ?? undefined);
  await q.query(
    `update intents set status = $2, answer = $3, answer_status = $4, settled_at = $5, executions = 1 where id = $1`,
    // The first settle answers the secret an answer may carry; the stored copy (replays, GET) never holds it.
    [r.id, status, withoutSecrets(JSON.stringify(stored)), answerStatus, now],
  );
  if (status === 'failed' && r.mandate_principal && r.mandate_id) {
    await refund(q, {
      account: r.account_id!,
      principal: r.mandate_principal,
      id: r.mandate_id,
      cents: Number(r.ceiling_cents),
    });
  }
  const value = (answer.value ?? {}) as { vin?: unknown };
  const input = json(r.input) as { vin?: unknown };
  const events = [
    platformEvent(
      'Intent.settled@1',
      {
        occurredAt: now,
        account: r.account_id,
        capability: r.capability,
        vin: typeof value.vin === 'string' ? value.vin : typeof input.vin === 'string' ? input.vin : null,
        simulated: (json(ex.ctx) as { environment?: string }).environment === 'sandbox',
      },
      {
        intentId: r.id,
        capability: r.capability,
        origin: json(r.origin) ?? null,
        answerType: type as EventAnswerType,
        executionId: ex.id,
        charged: fromCents(Number(r.charged_cents ?? 0)),
      },
    ),
  ];
  return { chargedCents: Number(r.charged_cents ?? 0), events, answer: stored };
});
