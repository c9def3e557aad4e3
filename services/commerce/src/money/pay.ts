import {
  canonicalJson,
  capabilityByName,
  newId,
  opTimeouts,
  ops,
  problemsOf,
  type OpInput,
  type OpReply,
  type OpReplyOf,
  type Blocked,
} from '@vcs/contract';
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import {
  centsOfAtomic,
  countCall,
  leaseSecondsLeft,
  leaseUntil,
  type CallContext,
  type Queryable,
} from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { iso, json, refusal } from './common.ts';
import { findExecution, runExecution, type ExecutionRow } from './executions.ts';
import {
  answerOfExecution,
  callAgain,
  findIntent,
  insertIntent,
  intentExecution,
  settlePath,
  type IntentRow,
} from './intents.ts';
import {
  chainVerdict,
  checkPayment,
  facilitatorTimeoutMs,
  intentTermsOf,
  paymentHeader,
  paymentPending,
  paymentRefusal,
  railOf,
  requirementFor,
  settleOnce,
  type IntentTerms,
  type PaymentRow,
  type Refusal,
} from './payments.ts';
import { move } from './transition.ts';

/**
 * Paying an intent with x402, on the payment's lifecycle (libs/contract lifecycles.ts): find what the authorization
 * already pays (a retry is a retry, v1 or v2, on any route) or bind it to the intent it was offered for; send it
 * once to the facilitator; and whenever the answer is not a clear yes or a clear pre-broadcast no, let the chain
 * decide — never our clock, never a 402 for money that may have moved. Only a payment the chain proves executes
 * its intent, once.
 */

type PayRequest = {
  ctx: CallContext;
  payment: unknown;
  timeoutMs?: number;
  /** The intent the payment names: the settle route's, or a v2 payment's accepted.extra.intentId. */
  intentId?: string;
  /** The capability route the payment was presented on, with its input: what it must have been offered for. */
  route?: { capability: string; input: Record<string, unknown> };
};

/** `sys.commerce.intents.pay` (a paid call on a capability's route). */
export const payOnRoute = (services: Services, req: OpInput<'intentsPay'> & { ctx: CallContext }) =>
  payIntent(services, {
    ctx: req.ctx,
    payment: req.payment,
    timeoutMs: req.timeoutMs,
    intentId: req.intentId,
    route: { capability: req.capability, input: req.input },
  });

/** How long one request may drive a payment before anyone else (a retry, the reconciler) may: the facilitator's time. */
const leaseFrom = (services: Services) => leaseUntil(services.clock, facilitatorTimeoutMs(services)).toISOString();

type Bound =
  | { reply: OpReplyOf<'intentsPay'> }
  | { execution: string; intentId: string }
  | { payment: PaymentRow; fresh: boolean; t: IntentTerms; firstCall?: boolean };

/** Hold `key` until this transaction ends (every replica: Postgres's advisory locks; PGlite has them too). */
const lockFor = (q: Queryable, key: string) => q.query('select pg_advisory_xact_lock(hashtext($1))', [key]);

/** The one key of an authorization: network, asset, payer, nonce (addresses and nonces compare without case). */
const authorizationKey = (network: string, asset: string, payer: string, nonce: string) =>
  [network, asset.toLowerCase(), payer.toLowerCase(), nonce.toLowerCase()].join(':');

export async function payIntent(services: Services, req: PayRequest): Promise<OpReplyOf<'intentsPay'>> {
  const { ctx } = req;
  const rail = railOf(services);
  const timeoutMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  const named = req.intentId ?? '(none)';
  if (!rail.terms.live) {
    return refusal(
      services,
      ctx,
      'payments-not-accepted',
      'this deployment takes no x402 payments (no X402_FACILITATOR_URL is set); ' +
        `settle intent ${named} with POST ${settlePath(named)} and a key`,
      { next: { method: 'POST', path: settlePath(named) } },
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
  const a = p.payload.authorization;
  const key = authorizationKey(rail.terms.network, rail.terms.asset, a.from, a.nonce);
  // x402's payment-identifier (a v2 payload's extensions): the client's own id for this payment.
  const identified = p.x402Version === 2 ? identifierOf(p) : { id: null };
  if ('problems' in identified)
    return refusal(services, ctx, 'payment-invalid', identified.problems, { x402Error: 'invalid_payload' });
  const step = await services.db.tx(async (q): Promise<Bound> => {
    // The id's lock before the authorization's (one order everywhere): one id, one payment, even at once.
    if (identified.id) await lockFor(q, `pid:${identified.id}`);
    // One authorization at a time, in every replica: the same header sent ten times at once is one binding.
    await lockFor(q, key);
    if (identified.id) {
      const first = (await q.query<PaymentRow>('select * from payments where payment_identifier = $1', [identified.id]))
        .rows[0];
      if (first && authorizationKey(first.network, first.asset, first.payer, first.nonce) !== key)
        return {
          reply: refusal(
            services,
            ctx,
            'payment-identifier-conflict',
            `payment id ${identified.id} was first sent with another payment (${first.id}, for intent ` +
              `${first.intent_id}); nothing was charged: send that payment again to read its answer, or use a new id`,
            { intent: { id: first.intent_id }, next: { method: 'POST', path: settlePath(first.intent_id) } },
          ),
        };
    }
    const had = (
      await q.query<PaymentRow>(
        `select * from payments where network = $1 and lower(asset) = lower($2) and lower(payer) = lower($3)
           and lower(nonce) = lower($4) for update`,
        [rail.terms.network, rail.terms.asset, a.from, a.nonce],
      )
    ).rows[0];
    if (had && req.intentId && req.intentId !== had.intent_id && !req.route)
      return {
        reply: refusal(
          services,
          ctx,
          'payment-other-intent',
          `this payment authorization already pays for intent ${had.intent_id}; one authorization pays for one ` +
            `intent only: read its answer by sending it to POST ${settlePath(had.intent_id)}`,
          { intent: { id: had.intent_id }, next: { method: 'POST', path: settlePath(had.intent_id) } },
        ),
      };
    // The intent: the one this authorization already pays, the one it names, or (v1 on a route) one made now.
    const intentId = had?.intent_id ?? req.intentId;
    let r = intentId ? await findIntent(q, intentId, true) : undefined;
    if (!r && intentId)
      return {
        reply: refusal(
          services,
          ctx,
          'intent-not-found',
          `no intent ${intentId}; intent ids start pi_ and come from a 402 OFFER`,
        ),
      };
    if (!r) {
      const made = await insertIntent(services, q, ctx, req.route!.capability, req.route!.input);
      if ('reply' in made) return made;
      r = made.row;
    }
    const wrong = req.route ? await wrongResource(services, ctx, r, req.route) : null;
    if (wrong) return { reply: wrong };
    // An authorization already bound is its own credential: its retries reach its intent whoever sends them.
    if (!had && r.account_id && r.account_id !== ctx.account)
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
    if (r.status === 'settled' || r.status === 'failed')
      return { reply: { status: r.answer_status ?? 200, answer: json(r.answer), replayed: true } };
    if (r.status === 'settling') {
      const ex = await findExecution(q, 'intent', r.id);
      if (ex) return { execution: ex.id, intentId: r.id };
    }
    const t = intentTermsOf(r);
    // Bound, and not refused or released: a retry. The checks for a new payment never apply to it.
    if (had && (had.status === 'settling' || had.status === 'unknown' || had.status === 'settled'))
      return { payment: had, fresh: false, t };
    if (had?.status === 'expired')
      return {
        reply: paymentRefusal(services, ctx, t, {
          code: 'payment-expired',
          message:
            "the chain has passed this authorization's validBefore with it unused: it can never move money; " +
            'nothing was charged: sign a new one',
          x402Error: 'invalid_exact_evm_payload_authorization_valid_before',
        }),
      };
    const live = (
      await q.query<{ id: string }>(
        `select id from payments where intent_id = $1 and status in ('settling', 'unknown', 'settled')`,
        [r.id],
      )
    ).rows[0];
    if (live)
      return {
        reply: paymentPending(
          t,
          'payment-pending',
          `another payment (${live.id}) for intent ${t.id} is being settled; read the outcome with GET /intents/${t.id}`,
          2,
        ),
      };
    const now = services.clock.now();
    if (r.status === 'expired' || new Date(r.expires_at) <= now) {
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
    const bad = checkPayment(rail, t, p, now.getTime());
    if (bad) return { reply: paymentRefusal(services, ctx, t, bad) };
    // Who pays is stored now: what the reconciler finishes is run and counted for this account.
    if (!r.account_id && ctx.account)
      await q.query('update intents set account_id = $2 where id = $1', [r.id, ctx.account]);
    const payer = { account_id: ctx.account, key_id: ctx.keyId, environment: ctx.environment };
    if (had) {
      const again = await move<PaymentRow, 'payment'>(q, 'payment', had.id, 'rebind', {
        reason: null,
        payload: JSON.stringify(p),
        lease_until: leaseFrom(services),
        updated_at: now.toISOString(),
        ...payer,
      });
      return { payment: again!, fresh: true, t };
    }
    const made = await q.query<PaymentRow>(
      `insert into payments(
         id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before, x402_version, payload,
         requirements, status, lease_until, account_id, key_id, environment, payment_identifier, created_at, updated_at
       )
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,'settling',$13,$14,$15,$16,$18,$17,$17) returning *`,
      [
        newId('payment'),
        t.id,
        rail.terms.network,
        rail.terms.asset,
        rail.terms.payTo,
        a.from,
        a.nonce,
        a.value,
        a.validBefore,
        p.x402Version,
        JSON.stringify(p),
        JSON.stringify(requirementFor(rail, t, p.x402Version)),
        leaseFrom(services),
        payer.account_id,
        payer.key_id,
        payer.environment,
        now.toISOString(),
        identified.id,
      ],
    );
    return { payment: made.rows[0]!, fresh: true, t, firstCall: true };
  });
  if ('reply' in step) return step.reply;
  if ('execution' in step)
    return answerOfExecution(services, step.execution, undefined, ctx.requestId, timeoutMs, step.intentId);
  // A paid call is one call, however many 503s it is retried through (the gateway leaves paid requests to us).
  if (step.firstCall && ctx.account && req.route)
    await countCall(services.kv, ctx.account, req.route.capability).catch((err) =>
      services.log.warn({ err, account: ctx.account }, 'usage: a paid call could not be counted'),
    );
  const drove = await drive(services, step.payment, step.fresh, timeoutMs);
  if (drove.kind === 'paid')
    return answerOfExecution(
      services,
      drove.execution.id,
      drove.execution.claimed,
      ctx.requestId,
      timeoutMs,
      step.t.id,
    );
  if (drove.kind === 'refused') return paymentRefusal(services, ctx, step.t, drove.refusal);
  return paymentPending(step.t, drove.code, drove.message, drove.retryAfter);
}

/** The payment-identifier a payload carries: none, a valid id, or why it is not one (the extension's own check). */
function identifierOf(p: unknown): { id: string | null } | { problems: string } {
  const ext = (p as { extensions?: Record<string, unknown> }).extensions?.[PAYMENT_IDENTIFIER];
  if (ext === undefined) return { id: null };
  const { id, validation } = extractAndValidatePaymentIdentifier(p as PaymentPayload);
  if (!validation.valid)
    return {
      problems:
        `the payment-identifier extension is not valid (${validation.errors?.join('; ')}); ` +
        'an id is 16-128 letters, digits, - and _',
    };
  return { id };
}

/** Honoured only for what was offered: the intent's capability, and its input (parsed as the capability parses it). */
async function wrongResource(
  services: Services,
  ctx: CallContext,
  r: IntentRow,
  route: NonNullable<PayRequest['route']>,
): Promise<OpReply<Blocked, never> | null> {
  const c = capabilityByName(route.capability);
  const input = c?.request.safeParse(route.input);
  const same =
    route.capability === r.capability && input?.success && canonicalJson(input.data) === canonicalJson(json(r.input));
  if (same) return null;
  const offered = capabilityByName(r.capability);
  return refusal(
    services,
    ctx,
    'payment-wrong-resource',
    route.capability === r.capability
      ? `this payment was made for ${r.capability} with another input (intent ${r.id}); nothing was charged: ` +
          `send it with that intent's input, or sign the offer this request is answered with`
      : `this payment was made for ${r.capability} (intent ${r.id}), not ${route.capability}; nothing was charged ` +
          `here: send it on ${offered?.method ?? 'POST'} ${offered?.path ?? settlePath(r.id)}, or pay this route's own offer`,
    {
      intent: { id: r.id, capability: r.capability },
      next: offered ? { method: offered.method, path: offered.path } : { method: 'POST', path: settlePath(r.id) },
    },
  );
}

/** Where driving a payment one step got to. */
type Drove =
  | { kind: 'paid'; execution: { id: string; claimed?: ExecutionRow } }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'waiting'; code: 'payment-pending' | 'payment-unavailable'; message: string; retryAfter: number };

const pending = (message: string, retryAfter = 2): Drove => ({
  kind: 'waiting',
  code: 'payment-pending',
  message: `${message}; it will not be charged twice: send the same request again in ${retryAfter} s`,
  retryAfter,
});

/**
 * One step of a payment: a fresh one is sent to the facilitator; one already bound is asked of the chain first
 * (used: paid at once, whoever is driving it), and sent again only once its lease ran out and the chain says it
 * can still land. Shared by the paying request, its retries and the reconciler.
 */
export async function drive(services: Services, row: PaymentRow, fresh: boolean, timeoutMs: number): Promise<Drove> {
  if (row.status === 'settled')
    return { kind: 'paid', execution: await paid(services, row, row.transaction, timeoutMs) };
  if (!fresh) {
    const v = await chainVerdict(services, row);
    if (v.kind === 'used') return { kind: 'paid', execution: await paid(services, row, v.transaction, timeoutMs) };
    if (v.kind === 'never') {
      await move(services.db, 'payment', row.id, 'expire', {
        reason: 'the chain passed validBefore with the authorization unused',
        lease_until: null,
        updated_at: services.clock.now().toISOString(),
      });
      return {
        kind: 'refused',
        refusal: {
          code: 'payment-expired',
          message: "the chain passed the payment's validBefore with it unused: nothing was charged: sign a new one",
          x402Error: 'invalid_exact_evm_payload_authorization_valid_before',
        },
      };
    }
    if (v.kind === 'unknown')
      return pending("the chain node is not answering, so the payment's outcome is not known yet");
    // Open on chain. Someone holds it under a live lease: wait for them. Otherwise take it and send it again.
    const now = services.clock.now();
    const taken = await move<PaymentRow, 'payment'>(
      services.db,
      'payment',
      row.id,
      'resubmit',
      { lease_until: leaseFrom(services), updated_at: now.toISOString() },
      { sql: 'lease_until is null or lease_until <= $1', params: [now.toISOString()] },
    );
    if (!taken)
      return pending(
        `payment ${row.id} is being settled now (transfer sent, not yet seen on chain)`,
        Math.min(5, leaseSecondsLeft(services.clock, row.lease_until)),
      );
    return send(services, taken, timeoutMs, false);
  }
  return send(services, row, timeoutMs, true);
}

/**
 * Send the payment to the facilitator and move it by what came back. Only a first send can be refused: a send
 * again may be refused by a facilitator that cannot see the first one's transfer (still in the pool; validBefore
 * near by its clock), so its refusal is a doubt the chain decides.
 */
async function send(services: Services, row: PaymentRow, timeoutMs: number, first: boolean): Promise<Drove> {
  const s = await settleOnce(services, row, first);
  const now = services.clock.now().toISOString();
  if (s.kind === 'settled') return { kind: 'paid', execution: await paid(services, row, s.transaction, timeoutMs) };
  if (s.kind === 'refused') {
    await move(services.db, 'payment', row.id, 'refuse', {
      reason: s.refusal.x402Error,
      lease_until: null,
      updated_at: now,
    });
    return { kind: 'refused', refusal: s.refusal };
  }
  if (s.kind === 'unreached') {
    await move(services.db, 'payment', row.id, 'release', { lease_until: null, updated_at: now });
    return { kind: 'waiting', code: 'payment-unavailable', message: s.message, retryAfter: 2 };
  }
  await move(services.db, 'payment', row.id, 'doubt', {
    reason: s.reason,
    transaction: s.transaction ?? row.transaction,
    lease_until: leaseFrom(services),
    updated_at: now,
  });
  // Often the chain already knows (a lost answer after the transfer landed): ask it once before answering 503.
  const v = await chainVerdict(services, { ...row, transaction: s.transaction ?? row.transaction });
  if (v.kind === 'used') return { kind: 'paid', execution: await paid(services, row, v.transaction, timeoutMs) };
  return pending(`the payment's settlement is not confirmed yet (${s.reason}); it is being checked on chain`);
}

/**
 * The chain has the transfer: the payment is settled and its intent paid — charged, the paying account bound, its
 * one execution made — in one transaction, under the authorization's lock (the order every payment write takes).
 */
async function paid(
  services: Services,
  row: PaymentRow,
  transaction: string | null,
  timeoutMs: number,
): Promise<{ id: string; claimed?: ExecutionRow }> {
  return services.db.tx(async (q) => {
    await lockFor(q, authorizationKey(row.network, row.asset, row.payer, row.nonce));
    const now = services.clock.now().toISOString();
    const p =
      (await move<PaymentRow, 'payment'>(q, 'payment', row.id, 'prove', {
        transaction: transaction ?? row.transaction,
        lease_until: null,
        updated_at: now,
      })) ?? (await q.query<PaymentRow>('select * from payments where id = $1', [row.id])).rows[0]!;
    const r = (await findIntent(q, p.intent_id, true))!;
    if (r.status !== 'pending' && r.status !== 'expired') {
      const existing = await findExecution(q, 'intent', r.id);
      if (existing) return { id: existing.id };
    }
    await move(q, 'intent', r.id, 'pay', {
      account_id: r.account_id ?? p.account_id,
      claimed_at: now,
      charged_cents: centsOfAtomic(p.amount_atomic),
      payment_id: p.id,
    });
    const ex = await intentExecution(
      q,
      services,
      r,
      {
        account: r.account_id ?? p.account_id,
        keyId: p.key_id,
        environment: p.environment ?? 'sandbox',
        trigger: r.trigger,
      },
      timeoutMs,
    );
    return { id: ex.id, claimed: ex };
  });
}

/**
 * The payments reconciler's pass: every payment not proven final (settling past its lease, unknown) is asked of
 * the chain until it proves the transfer happened (then its intent executes, as its own retry would have) or that
 * it never can.
 */
export async function reconcileOpenPayments(services: Services, q: Queryable = services.db): Promise<void> {
  if (!railOf(services).terms.live) return;
  const now = services.clock.now().toISOString();
  const { rows } = await q.query<PaymentRow>(
    `select * from payments
     where status = 'unknown' or (status = 'settling' and (lease_until is null or lease_until <= $1))
     order by updated_at limit 20`,
    [now],
  );
  for (const row of rows) {
    const d = await drive(services, row, false, services.settings.BUS_TIMEOUT_MS);
    if (d.kind === 'paid' && d.execution.claimed)
      await runExecution(services, d.execution.id, services.settings.BUS_TIMEOUT_MS, { claimed: d.execution.claimed });
  }
}
