import {
  blockedReply,
  capabilityByName,
  claimWith,
  edgeOf,
  leaseRunOutSql,
  isFinal,
  lifecycles,
  newId,
  platformEvent,
  opTimeouts,
  ops,
  requestText,
  withoutSecrets,
  type NextRequest,
  type OpInput,
  type OpReply,
  type PillarAnswer,
  type Blocked,
  type OpReplyOf,
} from '@vcs/contract';
import {
  busCallerOf,
  callCapability,
  leaseSecondsLeft,
  leaseUntil,
  eventsInsert,
  writeEvents,
  wrote,
  writeTogether,
  type CallContext,
  type Queryable,
  type Sql,
} from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import {
  contextOf,
  executionRow,
  jsonValue,
  type ExecutionRow,
  type ExecutionSource,
  type IntentRow,
  type PaymentRow,
  type StoredContext,
} from './rows.ts';
import { move, moveSql, mustMove, statesSql } from './transition.ts';
import { settlementCounted } from './usage.ts';

/**
 * The one durable execution. Every path that pays for or authorises a capability (a settled intent, a completed
 * handoff, a deal step) creates one execution and runs it here: claim under a lease → send the capability to its
 * pillar with the execution id (the pillar commits its effects under that id once, ever: platform runner.ts) →
 * record the answer. A pillar that does not answer in time leaves the outcome unknown, never "completed": the
 * lease runs out and the reconciler (or the caller's retry) runs it again under the same id, which answers the
 * stored answer if the first attempt did commit. Nothing sticks: every state has a way forward on its own.
 */

export type { ExecutionRow, ExecutionSource, StoredContext };

/** After a pillar was certainly not reached, the execution waits this long before the reconciler tries again. */
const NOT_RUN_BACKOFF_MS = 1_000;

/**
 * What finishing an execution does to the record it ran for (an intent settled, a handoff completed), planned before
 * the execution's own move and written in the same statement, each write only if that move happened.
 */
export type Finisher = (
  services: Services,
  ex: ExecutionRow,
  answer: PillarAnswer,
  status: number,
) => FinishPlan | Promise<FinishPlan>;
/**
 * A finisher's writes (each guarded by `afterExecution`), those of them that must happen wherever the execution's
 * move did (`required`: a miss fails the whole statement, execution and all: platform `writeTogether`), its events,
 * and what it made of what they returned.
 */
export interface FinishPlan {
  parts: Record<string, Sql>;
  /** The statement settles its source (counted in usage with it); false for a paid intent still to be charged. */
  settles: boolean;
  required: string[];
  events: Parameters<typeof writeEvents>[1];
  finished(rows: Record<string, unknown>): Finished;
}
/** A finisher's write happens only where the execution's own move did (the statement's `execution` part). */
export const afterExecution = wrote('execution');
/** What a finisher made: the answer as its caller sees it, and its source's record as it left it (for the caller that drives it on). */
export interface Finished {
  answer?: PillarAnswer;
  record?: SourceRecord;
}
/** An intent as its finisher left it, with the payment held for it (a handoff's finisher leaves none). */
export interface SourceRecord {
  intent: IntentRow;
  payment?: PaymentRow;
}
export type ExecutionOutcome =
  /** `recorded`: this attempt recorded the answer, and `answer` is the finisher's (an intent's carries its meter). */
  | {
      kind: 'done';
      row: ExecutionRow;
      status: number;
      answer: PillarAnswer;
      replayed: boolean;
      recorded?: boolean;
      /** Recorded by this attempt: its source's record as the finisher left it. */
      record?: SourceRecord;
    }
  /** Claimed by another attempt whose lease still runs. */
  | { kind: 'busy'; row: ExecutionRow; retryAfterSeconds: number }
  /** The pillar was certainly not reached: nothing ran; the execution is ready again. */
  | { kind: 'not-run'; row: ExecutionRow; reason: string }
  /** The pillar did not answer in time: it may have run; the lease decides when it is tried again. */
  | { kind: 'unknown'; row: ExecutionRow; retryAfterSeconds: number };

export interface NewExecution {
  source: ExecutionSource;
  sourceId: string;
  capability: string;
  input: unknown;
  ctx: StoredContext;
  origin?: unknown;
}

/**
 * How one attempt runs: the row its caller holds the claim on (it just made it), the request it answers, and what its
 * answer finishes (`finish`: an intent settled, a paid intent charged or voided, a handoff completed; none for a deal
 * step, closed by its Execution.finished@1 event) — passed by the caller that knows its source, never looked up.
 */
export interface RunOptions {
  claimed?: ExecutionRow;
  requestId?: string;
  finish?: Finisher;
}

/** An execution's stored answer (a finisher's source keeps its own, with its meter). */
const answerOf = (r: ExecutionRow) => jsonValue(r.answer) as PillarAnswer;

const leaseFor = (services: Services, timeoutMs: number) => leaseUntil(services.clock, timeoutMs);

/**
 * Create the execution for (source, sourceId), claimed by its creator under a lease, inside the caller's
 * transaction (the intent's claim, the handoff's completion). Creating it twice is creating it once.
 */
export async function createExecution(
  q: Queryable,
  services: Services,
  e: NewExecution,
  timeoutMs: number,
): Promise<ExecutionRow & { created: boolean }> {
  const insert = executionInsert(services, e, timeoutMs);
  const made = await q.query<unknown>(insert.sql, insert.params);
  if (made.rows[0]) return { ...executionRow.parse(made.rows[0]), created: true };
  return { ...(await findExecution(q, e.source, e.sourceId))!, created: false };
}

/**
 * The execution's insert as a statement, made only where `when` holds (SQL over the parts written with it: platform
 * `writeTogether`); one that exists already is left as it is and returns nothing.
 */
export function executionInsert(services: Services, e: NewExecution, timeoutMs: number, when = 'true'): Sql {
  const ctx: StoredContext = {
    account: e.ctx.account,
    keyId: e.ctx.keyId,
    environment: e.ctx.environment,
    trigger: e.ctx.trigger ?? null,
    intentId: e.ctx.intentId ?? null,
    mandate: e.ctx.mandate,
    ...(e.ctx.paymentId ? { paymentId: e.ctx.paymentId } : {}),
  };
  return {
    sql: `insert into executions(
            id, source, source_id, capability, input, ctx, origin, status, lease_until, attempts, created_at
          )
          select $1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, $7::jsonb, $10::text, $8::timestamptz,
                 1, $9::timestamptz
          where ${when}
          on conflict (source, source_id) do nothing returning *`,
    params: [
      newId('execution'),
      e.source,
      e.sourceId,
      e.capability,
      JSON.stringify(e.input ?? {}),
      JSON.stringify(ctx),
      e.origin ? JSON.stringify(e.origin) : null,
      leaseFor(services, timeoutMs).toISOString(),
      services.clock.now().toISOString(),
      lifecycles.execution.initial, // made claimed by its creator
    ],
  };
}

/**
 * `sys.commerce.executions.run`: a deal step's capability as a durable execution, made once per step attempt
 * (its sourceId); asked again, it is the same execution: its answer, or why there is none yet.
 */
export async function runExecutionOp(
  services: Services,
  req: OpInput<'executionsRun'> & { ctx: CallContext },
): Promise<OpReplyOf<'executionsRun'>> {
  const timeoutMs = opTimeouts(ops.executionsRun, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  const c = capabilityByName(req.capability);
  if (!c) return blockedReply('invalid-input', `no capability named ${req.capability}`);
  const ex = await services.db.tx((q) =>
    createExecution(
      q,
      services,
      {
        source: req.source,
        sourceId: req.sourceId,
        capability: c.name,
        input: req.input ?? {},
        origin: req.origin,
        ctx: req.ctx,
      },
      timeoutMs,
    ),
  );
  const retry = { method: 'GET' as const, path: req.origin ? `/buy/deals/${req.origin.dealId}` : '/catalog' };
  const out = await settleExecution(services, ex.id, timeoutMs, retry, {
    claimed: ex.created ? ex : undefined,
    requestId: req.ctx.requestId,
  });
  if (out.kind !== 'done') return pendingReply(out, retry);
  return { status: out.status, answer: out.answer, replayed: out.replayed };
}

export async function findExecution(
  q: Queryable,
  source: ExecutionSource,
  sourceId: string,
): Promise<ExecutionRow | undefined> {
  const { rows } = await q.query<unknown>('select * from executions where source = $1 and source_id = $2', [
    source,
    sourceId,
  ]);
  return rows[0] === undefined ? undefined : executionRow.parse(rows[0]);
}

/** Take the execution for one attempt: its final answer, busy under another's lease, or claimed (a new lease). */
async function claim(
  services: Services,
  id: string,
  timeoutMs: number,
  held?: ExecutionRow,
): Promise<ExecutionOutcome | { kind: 'claimed'; row: ExecutionRow }> {
  // The creator claimed it when it made it (createExecution), in its own transaction: nothing to read again.
  if (held?.status === lifecycles.execution.initial) return { kind: 'claimed', row: held };
  return services.db.tx(async (q) => {
    const { rows } = await q.query<unknown>('select * from executions where id = $1 for update', [id]);
    const r = executionRow.parse(rows[0]);
    // The one claim routine: final, its stored answer; running under a live lease, busy (anyone but its creator waits
    // for the lease to run out); ready, or its lease run out, taken under a new lease.
    return claimWith<'execution', Promise<ExecutionOutcome | { kind: 'claimed'; row: ExecutionRow }>>(
      'execution',
      r,
      services.clock.now().getTime(),
      {
        replay: async () => ({
          kind: 'done',
          row: r,
          status: r.answer_status ?? 200,
          answer: answerOf(r),
          replayed: true,
        }),
        wait: async () => ({
          kind: 'busy',
          row: r,
          retryAfterSeconds: leaseSecondsLeft(services.clock, r.lease_until),
        }),
        take: async () => {
          const lease = leaseFor(services, timeoutMs);
          await mustMove(q, 'execution', id, r.status, 'claim', {
            lease_until: lease.toISOString(),
            attempts: r.attempts + 1,
          });
          const running = edgeOf('execution', 'claim').to;
          return { kind: 'claimed', row: { ...r, status: running, lease_until: lease, attempts: r.attempts + 1 } };
        },
      },
    );
  });
}

/**
 * Run one attempt of an execution. `claimed` is the row the caller holds the claim on (it just created it).
 * Returns the final answer (run now or stored), or why there is none yet.
 */
export async function runExecution(
  services: Services,
  id: string,
  timeoutMs: number,
  opts: RunOptions = {},
): Promise<ExecutionOutcome> {
  const got = await claim(services, id, timeoutMs, opts.claimed);
  if (got.kind !== 'claimed') return got;
  const row = got.row;
  const c = capabilityByName(row.capability)!;
  const stored = contextOf(row);
  const ctx: CallContext = {
    ...stored,
    requestId: opts.requestId ?? newId('request'),
    settled: true,
    executionId: row.id,
  };
  const r = await callCapability(busCallerOf(services), c, jsonValue(row.input), ctx, timeoutMs);
  if (r.unavailable === 'no-responders' || r.unavailable === 'closed') {
    // Certainly not run: ready again, for the caller's retry or the reconciler after a short pause.
    const again = new Date(services.clock.now().getTime() + NOT_RUN_BACKOFF_MS).toISOString();
    await move(
      services.db,
      'execution',
      row.id,
      'unreached',
      { lease_until: again },
      {
        sql: 'attempts = $1',
        params: [row.attempts],
      },
    );
    return { kind: 'not-run', row, reason: r.unavailable };
  }
  if (r.unavailable)
    return { kind: 'unknown', row, retryAfterSeconds: leaseSecondsLeft(services.clock, row.lease_until) };
  return record(services, row, r.answer, r.status, r.replayed ?? false, opts.finish);
}

/** Record the pillar's answer once: the first attempt to come back (any attempt carries the same stored answer). */
async function record(
  services: Services,
  row: ExecutionRow,
  answer: PillarAnswer,
  status: number,
  replayed: boolean,
  finisher: Finisher | undefined,
): Promise<ExecutionOutcome> {
  const outcome = answer.type === 'BLOCKED' ? 'failed' : 'succeeded';
  const now = services.clock.now().toISOString();
  // The stored copy never holds a secret shown once; the first caller gets it in this answer only. An answer is
  // stored once: where its source keeps it (an intent's, with its meter; a handoff's result), not here too.
  const plan = await finisher?.(services, row, answer, status);
  const stored = contextOf(row);
  const input = jsonValue(row.input) as { vin?: unknown } | null;
  // Execution.finished closes a deal step (its own event); an intent's or a handoff's execution is told by theirs.
  const events = [
    ...(plan?.events ?? []),
    ...(row.source === 'deal' || !plan
      ? [
          platformEvent(
            'Execution.finished@1',
            {
              occurredAt: now,
              account: stored.account,
              capability: row.capability,
              vin: typeof input?.vin === 'string' ? input.vin : null,
              simulated: stored.environment === 'sandbox',
            },
            {
              executionId: row.id,
              source: row.source,
              sourceId: row.source_id,
              capability: row.capability,
              // A deal step's origin, as `executions.run` stored it (contract ops.ts).
              origin: (jsonValue(row.origin) as { dealId: string; step: number } | null) ?? null,
              status: outcome,
              answerType: answer.type,
              answers: typeof answer.answers === 'string' ? answer.answers : null,
            },
          ),
        ]
      : []),
  ];
  // One statement: the execution recorded (unless another attempt did first), its finisher's writes, the events.
  const written = await writeTogether(
    services.db,
    {
      execution: moveSql('execution', row.id, outcome === 'succeeded' ? 'succeed' : 'fail', {
        answer: finisher ? null : withoutSecrets(JSON.stringify(answer)),
        answer_status: status,
        finished_at: now,
        lease_until: null,
      }),
      ...plan?.parts,
      ...(events.length ? { events: eventsInsert(events, afterExecution.sql).sql } : {}),
      // The settlement counted with it, once: only where this attempt's move recorded it.
      ...(stored.account && (!plan || plan.settles)
        ? { usage: settlementCounted(stored.account, row.capability, 0, afterExecution.sql) }
        : {}),
    },
    plan?.required.length ? { if: 'execution', parts: plan.required } : undefined,
  );
  const done: ExecutionRow | undefined = written.execution; // none: another attempt recorded it first
  const finished = done && plan?.finished(written);
  const kept = done && { done, finished, answer: finished?.answer ?? answer };
  if (kept) {
    return {
      kind: 'done',
      row: kept.done,
      status,
      answer: kept.answer,
      replayed,
      recorded: true,
      record: kept.finished?.record,
    };
  }
  const { rows } = await services.db.query<unknown>('select * from executions where id = $1', [row.id]);
  const now_ = executionRow.parse(rows[0]);
  return { kind: 'done', row: now_, status: now_.answer_status ?? status, answer: answerOf(now_), replayed: true };
}

/**
 * Run an execution until it has its answer or the caller's time is up: wait out another attempt's lease while
 * there is time; past it, the typed 503/409 that says the outcome is not known yet and when to ask again.
 */
export async function settleExecution(
  services: Services,
  id: string,
  timeoutMs: number,
  retry: NextRequest,
  opts: RunOptions = {},
): Promise<ExecutionOutcome> {
  const until = services.clock.now().getTime() + timeoutMs;
  let claimed = opts.claimed;
  for (;;) {
    const left = until - services.clock.now().getTime();
    const out = await runExecution(services, id, Math.max(1000, left), { ...opts, claimed });
    claimed = undefined;
    if (out.kind !== 'busy' || services.clock.now().getTime() + 50 >= until) return out;
    await services.clock.sleep(50);
  }
}

/** The caller's answer for an execution with no final answer yet: never a 402, never "completed". */
export function pendingReply(
  out: Exclude<ExecutionOutcome, { kind: 'done' }>,
  retry: NextRequest,
): OpReply<Blocked, never> {
  const c = out.row.capability;
  const [code, message, retryAfter] =
    out.kind === 'not-run'
      ? [
          'pillar-unavailable' as const,
          `the pillar serving ${c} is not running (${out.reason}); nothing ran. ` +
            `It will be tried again by itself; read its answer with ${requestText(retry)} in a moment`,
          1,
        ]
      : out.kind === 'busy'
        ? [
            'idempotency-in-flight' as const,
            `${c} is running for this request now (execution ${out.row.id}); ` +
              `read its answer with ${requestText(retry)} in ${out.retryAfterSeconds} s`,
            out.retryAfterSeconds,
          ]
        : [
            'execution-pending' as const,
            `the pillar serving ${c} did not answer in time, so whether it ran is not known yet; ` +
              `it runs at most once and is taken up again by itself: ` +
              `read its answer with ${requestText(retry)} in ${out.retryAfterSeconds} s`,
            out.retryAfterSeconds,
          ];
  return blockedReply(code, message, {
    execution: { id: out.row.id, status: out.kind === 'not-run' ? 'ready' : 'running' },
    retryAfter,
    next: retry,
  });
}

/**
 * The executions due ($1: now): not final (the states the index `executions_due` holds, written in the text so a
 * generic plan reads only them) and their lease run out.
 */
export const DUE_EXECUTIONS_SQL = `select id, source, (ctx->>'paymentId') is not null as paid from executions
  where status in (${statesSql(lifecycles.execution.states.filter((s) => !isFinal('execution', s)))})
    and ${leaseRunOutSql(1)}
  order by created_at limit 20`;

/**
 * One pass of the reconciler: every execution whose lease ran out (its runner died, was paused, or its pillar did
 * not answer) is run again under its own id. Replicas take turns per row (the claim's row lock).
 */
export async function reconcileExecutions(
  services: Services,
  finisherOf: (due: { source: ExecutionSource; paid: boolean }) => Finisher | undefined,
): Promise<void> {
  const due = await services.db.query<{ id: string; source: ExecutionSource; paid: boolean }>(DUE_EXECUTIONS_SQL, [
    services.clock.now().toISOString(),
  ]);
  for (const { id, source, paid } of due.rows) {
    const out = await runExecution(services, id, services.settings.BUS_TIMEOUT_MS, {
      finish: finisherOf({ source, paid }),
    });
    if (out.kind === 'done')
      services.log.info(
        { executionId: id, capability: out.row.capability, replayed: out.replayed },
        'execution taken up again and finished',
      );
  }
}
