import {
  problemsOf,
  capabilitiesOfPillar,
  httpStatusOf,
  publicValue,
  withoutSecrets,
  type nouns,
  type Capability,
  type EventEnvelope,
  type Pillar,
} from '@vcs/contract';
import { serveFramed } from './bus/serve.ts';
import type { BaseConfig } from './config.ts';
import { eventWrites } from './events/outbox.ts';
import {
  provenanceOf,
  type CallContext,
  type HandlerResult,
  type Handler,
  type NounHandlers,
  type Services,
} from './handler.ts';
import {
  isUniqueViolation,
  statementsOf,
  together,
  type BulkWrite,
  type Queryable,
  type Statement,
} from './store/db.ts';
import { lazyTx } from './store/lazyTx.ts';

/** What a caller sends on `cap.<pillar>.<noun>.<verb>` (bus/call.ts). */
export interface CapabilityRequest {
  input: Record<string, unknown>;
  ctx: CallContext;
}

/**
 * One handler map per noun of the pillar, typed from the catalog: a missing noun or verb does not compile. `S`: the
 * settings its handlers may read (the pillar's, process.ts).
 */
export type PillarHandlers<P extends Pillar = Pillar, S extends BaseConfig = BaseConfig> = {
  [N in CatalogNoun as N['pillar'] extends P ? N['noun'] : never]: NounHandlers<N, S>;
};
type CatalogNoun = (typeof nouns)[number];

function envelope(c: Capability, result: HandlerResult<any>, ctx: CallContext, source: string) {
  const provenance = provenanceOf(ctx, { source });
  if (result.kind === 'BLOCKED') {
    const value = { code: result.code, message: result.message, ...(result.extra ?? {}) };
    return {
      type: 'BLOCKED' as const,
      answers: 'Blocked@1',
      value,
      evidence: value,
      provenance,
      events: [],
      meter: { charged: '0.00', posted: false },
    };
  }
  const value = result.value ?? {};
  return {
    type: result.kind,
    answers: c.answer,
    value,
    evidence: value,
    provenance,
    events: [],
    meter: { charged: '0.00', posted: true },
  };
}

/** Which declared events a result emits: the handler's choice, else `run` + `success` (or `run` + `failure`). */
function eventsFor(c: Capability, result: HandlerResult<any>, failed: boolean): string[] {
  if ((result.kind === 'OK' || result.kind === 'BLOCKED') && result.events) return result.events;
  if (result.kind === 'EMPTY' || (result.kind === 'BLOCKED' && !failed)) return [];
  return c.events.filter((e) => e.when === 'run' || e.when === (failed ? 'failure' : 'success')).map((e) => e.type);
}

/**
 * Run one capability: parse the input once, apply the sandbox's common triggers, run the handler in a
 * transaction together with its events (outbox) and the fact it posts, and shape the envelope.
 */
export async function runCapability(
  c: Capability,
  handler: Handler<any>,
  req: CapabilityRequest,
  services: Services,
): Promise<{
  answer: Record<string, unknown>;
  status: number;
  events: EventEnvelope[];
  valueJson?: string;
  replayed?: boolean;
}> {
  const { ctx } = req;
  const parsed = c.request.safeParse(req.input ?? {});
  if (!parsed.success) {
    const problems = problemsOf(parsed.error.issues);
    const a = envelope(
      c,
      {
        kind: 'BLOCKED',
        code: 'invalid-input',
        message: 'the input does not match the capability',
        extra: { problems },
      },
      ctx,
      services.source,
    );
    return { answer: a, status: 400, events: [] };
  }
  const sandbox = ctx.environment === 'sandbox';
  const trigger = sandbox ? ctx.trigger : null;
  const failureEvents = c.events.filter((e) => e.when === 'failure');
  let result: HandlerResult<any> | undefined;
  let failed = false;
  if (trigger === 'empty') result = { kind: 'EMPTY', value: {} };
  else if (trigger === 'blocked')
    result = {
      kind: 'BLOCKED',
      code: 'sandbox-blocked',
      message:
        'blocked by the sandbox trigger "blocked"; ' +
        `send ${c.method} ${c.path} again without the Sandbox-Trigger header`,
      extra: { trigger, next: { method: c.method, path: c.path } },
    };
  else if (trigger === 'fail' && failureEvents.length) {
    failed = true;
    result = {
      kind: 'BLOCKED',
      code: c.failureCode ?? 'execution-failed',
      message: `${c.name} failed (sandbox trigger "fail")`,
      extra: { trigger },
    };
  }
  const vin = (parsed.data as { vin?: string }).vin ?? null;
  // A run for a durable execution commits its effects under the execution id, once, ever.
  if (ctx.executionId) return runOnce(c, handler, parsed.data, result, failed, vin, ctx, services);
  // A capability that emits no events changes nothing: it runs without a transaction, and its fact is
  // posted only when this process has not already posted the same one (the hot path of free reads).
  if (!c.events.length) {
    result ??= await handler(parsed.data, { ...services, ctx, tx: services.db });
    // The value's JSON, made once: the fact and the answer's value and evidence all carry it.
    const value = result.kind === 'OK' ? (result.value as Record<string, unknown> | undefined) : undefined;
    const valueJson = value === undefined ? undefined : JSON.stringify(value);
    if (valueJson) await postFactOnce(services, c, ctx, value!, vin, valueJson);
    const answer = envelope(c, result, ctx, services.source);
    return { answer, status: httpStatusOf(answer), events: [], valueJson };
  }
  // The handler's transaction opens only if it queries; the events and fact then join it, else they are one batch.
  const tx = lazyTx(services.db);
  let done: { result: HandlerResult<any>; writes: Statement[]; envelopes: EventEnvelope[] };
  try {
    done = await effectsOf(c, handler, parsed.data, result, failed, vin, ctx, services, tx.q);
    await tx.commit(done.writes);
  } catch (e) {
    await tx.rollback();
    throw e;
  }
  const answer = envelope(c, done.result, ctx, services.source);
  return { answer, status: httpStatusOf(answer), events: done.envelopes };
}

/** Run the handler (unless a trigger decided) and make the writes its answer carries: its events (outbox) and fact. */
async function effectsOf(
  c: Capability,
  handler: Handler<any>,
  input: unknown,
  decided: HandlerResult<any> | undefined,
  failed: boolean,
  vin: string | null,
  ctx: CallContext,
  services: Services,
  q: Queryable,
) {
  const result = decided ?? (await handler(input, { ...services, ctx, tx: q }));
  const types = eventsFor(c, result, failed);
  const value = result.kind === 'OK' ? (result.value as Record<string, unknown>) : {};
  const eventVin = (typeof value.vin === 'string' ? value.vin : vin) ?? null;
  // Secret-marked members (contract secret.ts) never enter an event: its data is the value without them.
  const data =
    result.kind === 'OK'
      ? { ...publicValue(c, value), ...(result.eventData ?? {}) }
      : { ...(result.kind === 'BLOCKED' ? { code: result.code, message: result.message } : {}) };
  const { envelopes, writes } = eventWrites(
    types.map((type) => ({
      type,
      occurredAt: services.clock.now().toISOString(),
      account: ctx.account,
      capability: c.name,
      vin: eventVin,
      data,
      simulated: ctx.environment === 'sandbox',
    })),
  );
  if (result.kind === 'OK' && eventVin) writes.push(factWrite(c, ctx, factJson(c, value), eventVin));
  return { result, writes, envelopes };
}

async function storedCommit(q: Queryable, executionId: string) {
  const { rows } = await q.query<{ status: number; answer: unknown }>(
    'select status, answer from capability_commits where execution_id = $1',
    [executionId],
  );
  const r = rows[0];
  return r
    ? {
        status: r.status,
        answer: (typeof r.answer === 'string' ? JSON.parse(r.answer) : r.answer) as Record<string, unknown>,
      }
    : undefined;
}

/**
 * Exactly once for a durable execution: the handler, its events and fact, and the execution id's commit row are
 * one transaction — one statement when the handler queried nothing. The commit row is inserted last, so no lock is
 * held on it while the handler runs: two attempts (a retry after a lost reply, a stalled first attempt that woke
 * late) may both run the handler, but only the first to commit keeps its effects; the other's commit row fails its
 * statement (its unique key), it rolls back and answers the stored answer, `replayed`.
 */
async function runOnce(
  c: Capability,
  handler: Handler<any>,
  input: unknown,
  decided: HandlerResult<any> | undefined,
  failed: boolean,
  vin: string | null,
  ctx: CallContext,
  services: Services,
): Promise<{ answer: Record<string, unknown>; status: number; events: EventEnvelope[]; replayed?: boolean }> {
  const id = ctx.executionId!;
  // No look before: a first attempt (nearly every one) would pay a query for nothing; a repeat runs the handler,
  // finds the commit row taken at the end, and rolls back to the stored answer.
  const tx = lazyTx(services.db);
  try {
    const done = await effectsOf(c, handler, input, decided, failed, vin, ctx, services, tx.q);
    const answer = envelope(c, done.result, ctx, services.source);
    const status = httpStatusOf(answer);
    // The effects and the commit row as one statement: a commit row there already fails it, and none of it is written.
    const { bulk, plain } = statementsOf(done.writes);
    const effects = Object.fromEntries([...bulk, ...plain].map((w, i) => [`w${i}`, w]));
    await tx.commit([
      together({
        ...effects,
        committed: {
          sql: 'insert into capability_commits(execution_id, capability, status, answer) values ($1, $2, $3, $4) returning 1',
          params: [id, c.name, status, withoutSecrets(JSON.stringify(answer))],
        },
      }),
    ]);
    return { answer, status, events: done.envelopes };
  } catch (e) {
    await tx.rollback();
    if (!committedBefore(e)) throw e;
    const after = await storedCommit(services.db, id);
    return { ...after!, events: [], replayed: true };
  }
}

/** Another attempt of the same execution committed first: its commit row is there, so this one wrote nothing. */
const committedBefore = (e: unknown) => isUniqueViolation(e, 'capability_commits_pkey');

// A VIN's fact never keeps a secret-marked member; a capability without one serializes its value once, as before.
const factJson = (c: Capability, value: Record<string, unknown>, json?: string) => {
  const kept = publicValue(c, value);
  return kept === value && json !== undefined ? json : JSON.stringify(kept);
};

/**
 * The answer as JSON; `value` and `evidence` are usually one object, serialized once (or passed in, already
 * serialized) and written twice.
 */
export function answerJson(answer: Record<string, unknown>, valueJson?: string): string {
  if (answer.evidence !== answer.value) return JSON.stringify(answer);
  const value = valueJson ?? JSON.stringify(answer.value);
  let out = '{';
  for (const k in answer) {
    const v = answer[k];
    if (v === undefined) continue;
    out +=
      `${out.length > 1 ? ',' : ''}${JSON.stringify(k)}:` +
      `${k === 'value' || k === 'evidence' ? value : JSON.stringify(v)}`;
  }
  return out + '}';
}

/** A VIN's fact, many in one statement; the last of a (vin, capability) in a group wins, as it would one by one. */
const factUpsert: BulkWrite = {
  sql: `insert into vin_facts(vin, noun, capability, account_id, answer, value)
        select distinct on (vin, capability) vin, noun, capability, account_id, answer, value::jsonb
          from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
               with ordinality as t(vin, noun, capability, account_id, answer, value, ord)
         order by vin, capability, ord desc
        on conflict (vin, capability) do update
          set value = excluded.value, account_id = excluded.account_id, posted_at = now()`,
  one: `insert into vin_facts(vin, noun, capability, account_id, answer, value) values ($1, $2, $3, $4, $5, $6::jsonb)
        on conflict (vin, capability) do update
          set value = excluded.value, account_id = excluded.account_id, posted_at = now()`,
};
const factWrite = (c: Capability, ctx: CallContext, json: string, vin: string): Statement => ({
  bulk: factUpsert,
  row: [vin, c.noun, c.name, ctx.account, c.answer, json],
});

/** Facts posted to each store by this process, by (vin, capability) → value; bounded, so memory stays flat. */
const postedFactsByStore = new WeakMap<object, Map<string, string>>();
async function postFactOnce(
  services: Services,
  c: Capability,
  ctx: CallContext,
  value: Record<string, unknown>,
  inputVin: string | null,
  valueJson: string,
) {
  const vin = typeof value.vin === 'string' ? value.vin : inputVin;
  if (!vin) return;
  const json = factJson(c, value, valueJson);
  const memo = `${vin}|${c.name}`;
  let postedFacts = postedFactsByStore.get(services.db);
  if (!postedFacts) postedFactsByStore.set(services.db, (postedFacts = new Map()));
  if (postedFacts.get(memo) === json) return;
  await services.db.batch([factWrite(c, ctx, json, vin)]);
  if (postedFacts.size >= 10_000) postedFacts.delete(postedFacts.keys().next().value!);
  postedFacts.set(memo, json);
}

/** Serve every capability of a pillar on its subject, queue group = pillar, so replicas share the load. */
export function servePillar<P extends Pillar>(pillar: P, handlers: PillarHandlers<P>, services: Services) {
  const byNoun = handlers as unknown as Record<string, Record<string, Handler<any>>>;
  const stops = capabilitiesOfPillar(pillar).map((c) => {
    const handler = byNoun[c.noun]?.[c.verb];
    if (!handler) throw new Error(`pillar ${pillar} has no handler for ${c.name}`); // the types make this unreachable
    return serveFramed(services, c.subject, pillar, c.name, async (req) => {
      // A child logger per call only when something will be logged: building one is a real cost per request.
      const log = services.log.isLevelEnabled('info')
        ? services.log.child({ requestId: req.ctx?.requestId, capability: c.name })
        : services.log;
      const { answer, status, events, valueJson, replayed } = await runCapability(
        c,
        handler,
        req as CapabilityRequest,
        { ...services, log },
      );
      // Debug: at info the gateway's one line per request says it (route, status, duration, served-by).
      log.debug({ status, type: answer.type, replayed }, 'capability answered');
      return { status, kind: String(answer.type), json: answerJson(answer, valueJson), replayed };
    });
  });
  return { stop: () => stops.forEach((s) => s.stop()) };
}
