import { createHash } from 'node:crypto';
import { capabilityByName, problemsOf, canonicalJson, checkMandate, fromCents, mandate as mandateSchema, newId, offerTerms, opTimeouts, ops, toCents, withoutSecrets, type Mandate, type OpInput, type OpReply } from '@vcs/contract';
import { provenanceOf, writeEvents, type CallContext, type Queryable, type Services } from '@vcs/platform';
import { execute, iso, json, offerCapability, record, refusal } from './common.ts';

/** How long an offer stays settleable (also the x402 maxTimeoutSeconds). */
export const INTENT_TTL_SECONDS = 900;
/** A `settling` claim older than this is taken to be a crashed settlement and may be claimed again. */
const CLAIM_LEASE_MS = 60_000;

/** The operations' inputs (contract ops.ts) and the caller's context. */
type CreateIntentRequest = OpInput<'intentsCreate'> & { ctx: CallContext };
type SettleIntentRequest = OpInput<'intentsSettle'> & { ctx: CallContext };

interface IntentRow {
  id: string; account_id: string | null; capability: string; input: unknown; trigger: string | null; origin: unknown;
  price: unknown; ceiling: unknown; ceiling_cents: string | number; status: string; expires_at: string | Date; claimed_at: string | Date | null;
  executions: number; mandate_principal: string | null; mandate_id: string | null; answer: unknown; answer_status: number | null;
  created_at: string | Date; settled_at: string | Date | null;
}

const settlePath = (id: string) => `/intents/${id}/settle`;

/** The OFFER envelope for a pending intent: what it costs, the most it can cost, and how to settle it. */
function offerAnswer(services: Services, ctx: CallContext, row: Pick<IntentRow, 'id' | 'capability' | 'price' | 'ceiling' | 'expires_at'>) {
  const price = json(row.price) as { amount: string; currency: string };
  const value = {
    code: 'payment-required' as const,
    message: `${row.capability} costs ${price.amount} ${price.currency}; settle the intent with POST ${settlePath(row.id)} using your key (or send Accept-Price or a Mandate to settle in one round trip)`,
    capability: row.capability,
    price,
    ceiling: json(row.ceiling),
    intent: { id: row.id, status: 'pending' as const, capability: row.capability, expiresAt: iso(row.expires_at)! },
    settle: { method: 'POST' as const, path: settlePath(row.id) },
    next: { method: 'POST' as const, path: settlePath(row.id) },
  };
  return { type: 'OFFER', answers: 'Offer@1', value, evidence: value, provenance: provenanceOf(ctx, services), events: [], meter: { charged: '0.00', posted: false } };
}

/** `sys.commerce.intents.create`: validate the input, store a pending intent, answer 402 OFFER. */
export async function createIntent(services: Services, req: CreateIntentRequest): Promise<OpReply> {
  const ctx = req.ctx;
  const c = offerCapability(req.capability);
  if (!c) return refusal(services, ctx, 'invalid-input', `no capability named ${String(req.capability)}; names are noun.verb as in GET /catalog`);
  const parsed = c.request.safeParse(req.input ?? {});
  if (!parsed.success) {
    const problems = problemsOf(parsed.error.issues);
    return refusal(services, ctx, 'invalid-input', `the input to ${c.name} (${c.method} ${c.path}) is not valid; fix each problem listed`, { problems, capability: c.name, next: { method: c.method, path: c.path } });
  }
  const terms = offerTerms(c);
  const now = services.clock.now();
  const trigger = ctx.environment === 'sandbox' ? ctx.trigger : null;
  // Sandbox trigger offer-expired: the intent is born expired, so settling it shows the 410.
  const expires = trigger === 'offer-expired' ? now : new Date(now.getTime() + INTENT_TTL_SECONDS * 1000);
  const row = {
    id: newId('intent'), capability: c.name, price: terms.price, ceiling: terms.ceiling, expires_at: expires,
  };
  await services.db.query(
    `insert into intents(id, account_id, capability, input, trigger, origin, price, ceiling, ceiling_cents, expires_at, created_at)
     values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
    [row.id, ctx.account, c.name, JSON.stringify(parsed.data), trigger, req.origin ? JSON.stringify(req.origin) : null,
      JSON.stringify(terms.price), JSON.stringify(terms.ceiling), terms.ceilingCents, expires.toISOString(), now.toISOString()],
  );
  return { status: 402, answer: offerAnswer(services, ctx, row) };
}

function publicStatus(r: IntentRow, now: Date): string {
  if (r.status === 'settling') return 'pending';
  if (r.status === 'pending' && new Date(r.expires_at) <= now) return 'expired';
  return r.status;
}

function intentView(r: IntentRow, now: Date) {
  return {
    id: r.id, status: publicStatus(r, now), capability: r.capability, account: r.account_id,
    price: json(r.price), ceiling: json(r.ceiling), expiresAt: iso(r.expires_at), createdAt: iso(r.created_at), settledAt: iso(r.settled_at),
    origin: json(r.origin) ?? null, executions: r.executions,
    settle: { method: 'POST', path: settlePath(r.id) },
    answer: r.answer ? json(r.answer) : null,
  };
}

async function findIntent(q: Queryable, id: string, lock = false): Promise<IntentRow | undefined> {
  const { rows } = await q.query<IntentRow>(`select * from intents where id = $1${lock ? ' for update' : ''}`, [id]);
  return rows[0];
}

/** `sys.commerce.intents.get`: the intent's state; an account-bound intent is shown only to its account. */
export async function getIntent(services: Services, req: OpInput<'intentsGet'> & { ctx: CallContext }): Promise<OpReply> {
  const r = await findIntent(services.db, String(req.intentId));
  if (!r) return refusal(services, req.ctx, 'intent-not-found', `no intent ${req.intentId}; intent ids start pi_ and come from a 402 OFFER`);
  if (r.account_id && r.account_id !== req.ctx.account) {
    return refusal(services, req.ctx, 'intent-other-account', `intent ${r.id} belongs to another account; send the key of the account that made it`);
  }
  return record(services, req.ctx, 'Intent@1', intentView(r, services.clock.now()));
}

const digestOf = (m: Mandate) => createHash('sha256').update(canonicalJson(m)).digest('hex');

type Claim =
  | { kind: 'reply'; reply: OpReply }
  | { kind: 'replay'; row: IntentRow }
  | { kind: 'wait' }
  | { kind: 'run'; row: IntentRow; reserved: Reservation | null };

/** What a settlement took from a mandate's ledger, given back if it fails. */
interface Reservation { account: string; principal: string; id: string; cents: number }

/** The request that makes a fresh offer for a capability: an agent needs the method and path, not only its name. */
function callAgain(capability: string) {
  const c = capabilityByName(capability);
  return { method: c?.method ?? 'POST', path: c?.path ?? '/catalog' };
}

/** Take the intent for this settlement under a row lock: refuse, replay, wait, or claim it (pending → settling). */
async function claim(services: Services, q: Queryable, req: SettleIntentRequest, now: Date): Promise<Claim> {
  const { ctx } = req;
  const r = await findIntent(q, String(req.intentId), true);
  if (!r) return { kind: 'reply', reply: refusal(services, ctx, 'intent-not-found', `no intent ${req.intentId}; intent ids start pi_ and come from a 402 OFFER`) };
  if (r.account_id && r.account_id !== ctx.account) {
    return { kind: 'reply', reply: refusal(services, ctx, 'intent-other-account', `intent ${r.id} belongs to another account; settle it with the key of the account that made it`, { intent: { id: r.id } }) };
  }
  if (r.status === 'settled' || r.status === 'failed') return { kind: 'replay', row: r };
  if (r.status === 'settling' && r.claimed_at && now.getTime() - new Date(r.claimed_at).getTime() < CLAIM_LEASE_MS) return { kind: 'wait' };
  if (r.status === 'expired' || new Date(r.expires_at) <= now) {
    await q.query(`update intents set status = 'expired' where id = $1`, [r.id]);
    const again = callAgain(r.capability);
    return { kind: 'reply', reply: refusal(services, ctx, 'intent-expired', `intent ${r.id} expired at ${iso(r.expires_at)}; call ${again.method} ${again.path} (${r.capability}) again for a fresh offer`, { intent: { id: r.id, status: 'expired' }, next: again }) };
  }
  const trigger = (ctx.environment === 'sandbox' ? ctx.trigger : null) ?? r.trigger;
  if (trigger === 'offer-declined') {
    const again = callAgain(r.capability);
    const declined = refusal(services, ctx, 'offer-declined', `the payment for intent ${r.id} was declined (sandbox trigger offer-declined); call ${again.method} ${again.path} (${r.capability}) again for a new offer`, { intent: { id: r.id, status: 'failed' }, next: again });
    await q.query(`update intents set status = 'failed', account_id = coalesce(account_id, $2), answer = $3, answer_status = $4, settled_at = $5 where id = $1`,
      [r.id, ctx.account, JSON.stringify(declined.answer), declined.status, now.toISOString()]);
    return { kind: 'reply', reply: declined };
  }
  let reserved: Reservation | null = null;
  if (req.mandate !== undefined) {
    // Spend is the presenting account's (docs/money.md): the same principal and id under another account is another ledger.
    const account = r.account_id ?? ctx.account!;
    const m = mandateSchema.safeParse(req.mandate);
    if (!m.success) return { kind: 'reply', reply: refusal(services, ctx, 'invalid-mandate', 'the mandate does not match the Mandate schema') };
    const price = json(r.price) as { currency: string };
    const violation = checkMandate(m.data, { capability: r.capability, ceilingCents: Number(r.ceiling_cents), currency: price.currency, now });
    if (violation) return { kind: 'reply', reply: refusal(services, ctx, violation.code, violation.message, { ...(violation.tripwire ? { tripwire: violation.tripwire } : {}), intent: { id: r.id, status: 'pending' } }) };
    const cents = Number(r.ceiling_cents);
    const ceilingCents = toCents(m.data.ceiling.amount) ?? 0;
    await q.query(
      `insert into mandate_spend(account_id, principal, mandate_id, digest, currency, ceiling_cents) values ($6,$1,$2,$3,$4,$5) on conflict do nothing`,
      [m.data.principal, m.data.id, digestOf(m.data), m.data.ceiling.currency, ceilingCents, account],
    );
    const held = await q.query<{ digest: string; spent_cents: string; ceiling_cents: string }>(
      'select digest, spent_cents, ceiling_cents from mandate_spend where account_id = $3 and principal = $1 and mandate_id = $2 for update', [m.data.principal, m.data.id, account]);
    if (held.rows[0]!.digest !== digestOf(m.data)) {
      return { kind: 'reply', reply: refusal(services, ctx, 'invalid-mandate', `mandate ${m.data.id} of ${m.data.principal} was first used with other terms; a changed mandate needs a new id`) };
    }
    const took = await q.query(
      `update mandate_spend set spent_cents = spent_cents + $3, updated_at = now() where account_id = $4 and principal = $1 and mandate_id = $2 and spent_cents + $3 <= ceiling_cents`,
      [m.data.principal, m.data.id, cents, account]);
    if (took.rowCount === 0) {
      const spent = Number(held.rows[0]!.spent_cents);
      return { kind: 'reply', reply: refusal(services, ctx, 'mandate-ceiling-exceeded',
        `${r.capability} can cost ${fromCents(cents)} but mandate ${m.data.id} has ${fromCents(Number(held.rows[0]!.ceiling_cents) - spent)} of its ${m.data.ceiling.amount} ${m.data.ceiling.currency} left; ask the principal for a larger ceiling`,
        { mandate: { id: m.data.id, ceiling: m.data.ceiling, spent: { amount: fromCents(spent), currency: m.data.ceiling.currency } }, intent: { id: r.id, status: 'pending' } }) };
    }
    reserved = { account, principal: m.data.principal, id: m.data.id, cents };
  }
  await q.query(
    `update intents set status = 'settling', account_id = coalesce(account_id, $2), claimed_at = $3, executions = executions + 1,
       mandate_principal = $4, mandate_id = $5 where id = $1`,
    [r.id, ctx.account, now.toISOString(), reserved?.principal ?? null, reserved?.id ?? null]);
  return { kind: 'run', row: { ...r, account_id: r.account_id ?? ctx.account }, reserved };
}

const refund = (q: Queryable, res: Reservation) =>
  q.query('update mandate_spend set spent_cents = spent_cents - $3, updated_at = now() where account_id = $4 and principal = $1 and mandate_id = $2', [res.principal, res.id, res.cents, res.account]);

/**
 * `sys.commerce.intents.settle`: execute the intent's capability exactly once. The claim (pending → settling)
 * is taken under `select … for update`, the capability runs with no lock held, and its answer is stored with
 * the Intent.settled event in one transaction. A second settle replays the stored answer.
 */
export async function settleIntent(services: Services, req: SettleIntentRequest): Promise<OpReply> {
  const timeoutMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  const started = services.clock.now().getTime();
  for (;;) {
    const now = services.clock.now();
    const got = await services.db.tx((q) => claim(services, q, req, now));
    if (got.kind === 'reply') return got.reply;
    if (got.kind === 'replay') return { status: got.row.answer_status ?? 200, answer: json(got.row.answer), replayed: true };
    if (got.kind === 'wait') {
      if (services.clock.now().getTime() - started > timeoutMs) return refusal(services, req.ctx, 'idempotency-in-flight', `intent ${req.intentId} is being settled by another request; retry POST ${settlePath(String(req.intentId))} in a moment to read its answer`, { next: { method: 'POST', path: settlePath(String(req.intentId)) } });
      await services.clock.sleep(50);
      continue;
    }
    return run(services, req, got.row, got.reserved, timeoutMs);
  }
}

async function run(services: Services, req: SettleIntentRequest, row: IntentRow, reserved: Reservation | null, timeoutMs: number): Promise<OpReply> {
  const c = offerCapability(row.capability)!;
  const ctx: CallContext = {
    ...req.ctx, account: row.account_id, settled: true, intentId: row.id,
    trigger: (req.ctx.environment === 'sandbox' ? req.ctx.trigger : null) ?? row.trigger,
    mandate: req.mandate,
  };
  const done = await execute(services, c, json(row.input), ctx, timeoutMs, { method: 'POST', path: settlePath(row.id) });
  if (done.unavailable === 'no-responders' || done.unavailable === 'closed') {
    // It certainly did not run: give the intent back so a retry can settle it.
    await services.db.tx(async (q) => {
      await q.query(`update intents set status = 'pending', claimed_at = null where id = $1 and status = 'settling'`, [row.id]);
      if (reserved) await refund(q, reserved);
    });
    return { status: done.status, answer: done.answer };
  }
  if (done.unavailable) return { status: done.status, answer: done.answer }; // may have run: the claim's lease decides
  const type = String(done.answer.type);
  const status = type === 'OK' || type === 'EMPTY' ? 'settled' : 'failed';
  await services.db.tx(async (q) => {
    await q.query(`update intents set status = $2, answer = $3, answer_status = $4, settled_at = $5 where id = $1`,
      // The first settle answers the secret an answer may carry; the stored copy (replays, GET) never holds it.
      [row.id, status, withoutSecrets(JSON.stringify(done.answer)), done.status, services.clock.now().toISOString()]);
    if (reserved && status === 'failed') await refund(q, reserved);
    const value = (done.answer.value ?? {}) as { vin?: unknown };
    const input = json(row.input) as { vin?: unknown };
    await writeEvents(q, [{
      type: 'Intent.settled@1', occurredAt: services.clock.now().toISOString(), account: row.account_id, capability: row.capability,
      vin: typeof value.vin === 'string' ? value.vin : typeof input.vin === 'string' ? input.vin : null,
      data: { intentId: row.id, capability: row.capability, origin: json(row.origin) ?? null, answerType: type },
      simulated: ctx.environment === 'sandbox',
    }]);
  });
  return { status: done.status, answer: done.answer, replayed: false };
}
