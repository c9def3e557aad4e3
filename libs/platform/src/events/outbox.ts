import { eventSubjectOf, newId, type EventEnvelope } from '@vcs/contract';
import type { Logger } from 'pino';
import type { Bus } from '../bus/types.ts';
import { enc } from '../bus/types.ts';
import { eventFlow } from '../metrics.ts';
import { IdleRounds, type Idles } from './idle.ts';
import { contextFrom, endSpan, SpanKind, spanTraceparent, startSpan, traceparentOf, tracing } from '../tracing.ts';
import {
  mergeWrites,
  statementsOf,
  type BulkWrite,
  type Db,
  type Queryable,
  type Sql,
  type Statement,
} from '../store/db.ts';

/** Outbox rows, many in one statement (group commit merges every caller's rows: store/groupCommit.ts). */
const outboxSql = (where = '') => `insert into outbox_events(id, type, subject, account_id, vin, payload, traceparent)
        select id, type, subject, account_id, vin, payload, traceparent
          from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
               with ordinality as t(id, type, subject, account_id, vin, payload, traceparent, ord)${where}
         order by ord`;
export const outboxInsert: BulkWrite = {
  sql: outboxSql(),
  one: `insert into outbox_events(id, type, subject, account_id, vin, payload, traceparent)
        values ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
};

/**
 * This process's relays (one per process; more only where a test runs several stores in one). Every event written in
 * the process has them relay it within `COALESCE_MS`, with whatever else is committed meanwhile: the writer's own relay
 * publishes its events, and another process's relay takes them only if they wait past `TAKEOVER_MS`.
 */
const relays = new Set<OutboxRelay>();

/** Events as outbox rows, with their ids: for a caller that writes them together with other rows. */
export function eventWrites(events: Omit<EventEnvelope, 'id'>[]): { envelopes: EventEnvelope[]; writes: Statement[] } {
  const envelopes = events.map((e): EventEnvelope => ({ id: newId('event'), ...e }));
  // Scheduled now, run after the window: by then the statement these rows go into has committed.
  if (envelopes.length) for (const r of relays) r.kickSoon();
  // The trace the events are written in (null while tracing is off): the relay publishes it with each event.
  const writes = envelopes.map((env) => ({
    bulk: outboxInsert,
    row: [env.id, env.type, eventSubjectOf(env), env.account, env.vin, JSON.stringify(env), traceparentOf() ?? null],
  }));
  return { envelopes, writes };
}

/** Write events into the outbox inside the caller's transaction. */
export async function writeEvents(q: Queryable, events: Omit<EventEnvelope, 'id'>[]): Promise<EventEnvelope[]> {
  const { envelopes, writes } = eventWrites(events);
  for (const st of mergeWrites(writes)) await q.query(st.sql, st.params);
  return envelopes;
}

/**
 * Events (one or more) as one insert, written only where `when` holds: SQL over the parts written together with it
 * (platform `writeTogether`), such as `wrote('intent').sql` for an intent's move that may not happen.
 */
export function eventsInsert(
  events: Omit<EventEnvelope, 'id'>[],
  when: string,
): { envelopes: EventEnvelope[]; sql: Sql } {
  const { envelopes, writes } = eventWrites(events);
  const [rows] = statementsOf(writes, { columns: true }).bulk;
  return { envelopes, sql: { sql: outboxSql(` where ${when}`), params: rows!.params } };
}

/**
 * Whether a flush first looks for pending rows, and which (`OutboxRelay.kick`): rows another relay holds are not
 * looked for (its mark follows its publish).
 */
type Look = boolean | number;
const UNCLAIMED = 'published_at is null and (claimed_until is null or claimed_until < now())';
const LOOK_ANY = `select 1 from outbox_events where ${UNCLAIMED} limit 1`;
const LOOK_AGED = `select 1 from outbox_events
  where ${UNCLAIMED} and created_at < now() - make_interval(secs => $1) limit 1`;

interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: unknown;
  traceparent: string | null;
}
/** The pending rows (its `where` ends it, so a caller may add a condition, then its order and limit). */
const PENDING = 'select seq, id, subject, payload, traceparent from outbox_events where published_at is null';
/**
 * How long a commit's events may wait for others to be relayed with (`kickSoon`): at 40 paid calls a second, two or
 * three calls' events in one batch, within the webhook delivery goal (p99 ≤ 250 ms from commit to receipt).
 */
const COALESCE_MS = 50;
/**
 * How long a row waits for the relay of the process that wrote it before any relay's tick takes it (a writer that
 * died, or whose flush failed): the ticks of the other processes (the data pillar's, say) leave a commit's fresh events
 * to the writer's relay, so a process that wrote nothing has no part in relaying them.
 */
const TAKEOVER_MS = 5_000;
/** How long a relay's claim on its rows lasts: past the longest a publish is retried (bus/nats.ts PUBLISH_RETRY). */
const CLAIM_SECONDS = 30;

/**
 * Relays outbox rows to the stream in order. Rows are claimed (`claimed_until`) so relays in several replicas never
 * publish one row at the same time; Nats-Msg-Id = event id drops any republish after a crash.
 */
export class OutboxRelay implements Idles {
  private timer: NodeJS.Timeout | undefined;
  /** The flush `kickSoon` has scheduled, if any. */
  private soon: NodeJS.Timeout | undefined;
  private busy = false;
  private again = false;
  private stopped = false;
  /** When relaying began failing (0 while it works): said once as a pause, and once as a resumption. */
  private pausedAt = 0;
  /** Those waiting on `onIdle`, answered at the end of a flush begun after they asked. */
  private rounds = new IdleRounds();
  /** Rows published since start (events/idle.ts). */
  done = 0;
  /** When this process last wrote events (`kickSoon`). */
  private wroteAt = 0;
  /** Seqs of rows this relay published and has not yet marked (the sole relay's next statement marks them). */
  private unmarked: string[] = [];
  /**
   * `onIdle` calls so far, and those a flush begun after them has answered by marking what it published: while one is
   * unanswered, each flush marks before it ends.
   */
  private settlesAsked = 0;
  private settlesDone = 0;

  /**
   * `sole`: this is the only relay on its store (the embedded mode). It then needs no claims: it reads the pending
   * rows, publishes them and marks them. Either way no transaction is held open across the publishes (in PGlite it
   * would hold its only connection and make every other write wait). A crash between publish and mark publishes
   * the rows again: JetStream drops them by id; the embedded stream, new after the crash, takes them, and the
   * consumers' writes, keyed by event, make them count once.
   */
  constructor(
    private db: Db,
    private bus: Bus,
    private log: Logger,
    private intervalMs = 250,
    private sole = false,
    private coalesceMs = COALESCE_MS,
  ) {}

  start() {
    relays.add(this);
    const tick = () => {
      if (!this.stopped) {
        // The sole relay, or one whose last flush failed, takes every pending row. Any other leaves fresh rows to the
        // kick of the process that wrote them: if its process wrote events lately it takes rows its own kick may have
        // missed (a commit slower than the window), else only rows left too long.
        const minAgeMs =
          this.sole || this.pausedAt ? 0 : Date.now() - this.wroteAt < TAKEOVER_MS ? 2 * this.coalesceMs : TAKEOVER_MS;
        // A flush under way already takes what is pending: a tick during it is skipped, not run blind after it.
        if (!this.busy) this.kick(minAgeMs || true);
        this.timer = setTimeout(tick, this.intervalMs);
      }
    };
    tick();
    return this;
  }

  /**
   * Relay now: called by `kickSoon` after a commit (rows are known to wait: no look first) so events do not wait for
   * the next tick, and by the tick with a `look` (an idle relay then costs one indexed read, not a transaction):
   * `true` looks for any pending row, a number for rows older than that many milliseconds. The sole relay's last
   * batch is marked by its next statement: the next kick's, or the tick's, within `intervalMs`.
   */
  kick(look: Look = false) {
    // This flush takes every row committed so far: a flush scheduled by `kickSoon` would find nothing of its own. A
    // tick's look for rows left too long takes none of the fresh ones, so the flush scheduled for them stays.
    if (typeof look !== 'number') {
      clearTimeout(this.soon);
      this.soon = undefined;
    }
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    // A tick that looks only for rows left too long says nothing of fresh ones: it answers no one waiting on onIdle.
    const flush = typeof look === 'number' ? 0 : this.rounds.begin();
    const asked = this.settlesAsked;
    const settle = asked > this.settlesDone;
    this.flush(100, look, settle)
      .then(
        (n) => {
          this.done += n;
          if (settle) this.settlesDone = Math.max(this.settlesDone, asked);
          if (flush) this.rounds.idle(flush);
          if (!this.pausedAt) return;
          this.log.info({ afterMs: Date.now() - this.pausedAt, relayed: n }, 'outbox relay resumed');
          this.pausedAt = 0;
          eventFlow.publishFailingSince = 0;
        },
        (e) => {
          // Once per outage, not once per tick; the relay keeps trying every tick, and the rows wait in the outbox.
          if (this.pausedAt) return;
          this.pausedAt = Date.now();
          eventFlow.publishFailingSince = this.pausedAt;
          this.log.warn(
            { reason: (e as Error).message },
            'outbox relay paused: events wait in the outbox until the stream or the store answers',
          );
        },
      )
      .finally(() => {
        this.busy = false;
        // Asked again while it ran: the next flush waits out the window too, so what commits meanwhile goes with it.
        if (this.again && !this.stopped) {
          this.again = false;
          this.soon ??= setTimeout(() => this.kick(), this.coalesceMs);
        }
      });
  }

  /**
   * After a commit: relay within `coalesceMs`, together with what is committed meanwhile. Under load, one claim, one
   * publish round, one mark and one wake-up of each consumer serve several commits, not one each; an event waits
   * `coalesceMs` at most for it.
   */
  kickSoon() {
    this.wroteAt = Date.now();
    if (this.soon || this.stopped) return;
    this.soon = setTimeout(() => this.kick(), this.coalesceMs);
  }

  /**
   * Resolves once every row committed before the call is on the stream: at the end of the first flush begun after
   * it that succeeds (a flush runs until a batch comes back short). The name and meaning are p-queue's `onIdle`;
   * not `drain`, which in nats.js (and on our Bus) also closes. It starts that flush itself, so it never waits a
   * tick; while the stream is down it waits, as the rows do, and a stop resolves it.
   */
  onIdle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const idle = this.rounds.wait();
    // Its flush also marks what it published: once idle, the outbox holds no row that is on the stream.
    this.settlesAsked++;
    this.kick(true);
    return idle;
  }

  /**
   * Publish every pending row; returns how many were relayed. Claimed rows are marked published as soon as they are:
   * a relay killed before its next statement would leave them to wait out their claim. The sole relay instead leaves
   * its last batch's mark to its next statement, which marks it and reads the next batch in one (`next`): one
   * statement per batch relayed, not two. It marks at once when `settle` is asked (a caller waiting on it, or a stop).
   */
  async flush(batch = 100, look: Look = true, settle = true): Promise<number> {
    let total = 0;
    for (;;) {
      const found = () =>
        typeof look === 'number' ? this.db.query(LOOK_AGED, [look / 1000]) : this.db.query(LOOK_ANY);
      if (look && !this.unmarked.length && !(await found()).rows.length) return total;
      look = true; // after the first round, only a full batch goes round again, and then a look is cheap
      const rows = this.sole ? await this.next(batch) : await this.claim(batch);
      const seqs = rows.map((r) => r.seq);
      try {
        // All of a batch in flight at once: one connection keeps them in order on the stream; if any fails, the
        // whole batch is published again (the stream drops duplicates by id).
        await Promise.all(
          rows.map((r) =>
            this.publish(
              r.subject,
              enc.encode(typeof r.payload === 'string' ? r.payload : JSON.stringify(r.payload)),
              r.id,
              r.traceparent,
            ),
          ),
        );
      } catch (err) {
        // Given back at once, so the next tick (of any relay) tries them again rather than after the claim.
        if (!this.sole && rows.length)
          await this.db
            .query('update outbox_events set claimed_until = null where seq = any($1::bigint[])', [seqs])
            .catch(() => undefined);
        throw err;
      }
      this.unmarked.push(...seqs);
      if (!this.sole) await this.markPublished();
      total += rows.length;
      if (rows.length < batch) break;
    }
    if (settle) await this.markPublished();
    return total;
  }

  /**
   * The sole relay's next batch, in one statement that also marks the rows it published last (`unmarked`): they are
   * left out of the read by seq, as the statement's snapshot still sees them pending. If the statement fails, they
   * wait for the next one. A crash before it republishes them at the next start; the consumers' writes are keyed by
   * event, so they take effect once (test/relay-faults.test.ts).
   */
  private next(batch: number): Promise<OutboxRow[]> {
    return this.marking(
      async (seqs) =>
        (
          await this.db.query<OutboxRow>(
            `with marked as (update outbox_events set published_at = now() where seq = any($2::bigint[]))
             ${PENDING} and not (seq = any($2::bigint[])) order by seq limit $1`,
            [batch, seqs],
          )
        ).rows,
    );
  }

  /** `statement` marks the unmarked rows: they are taken off the list, and put back if it fails. */
  private async marking<T>(statement: (seqs: string[]) => Promise<T>): Promise<T> {
    const seqs = this.unmarked.splice(0);
    try {
      return await statement(seqs);
    } catch (err) {
      this.unmarked.unshift(...seqs);
      throw err;
    }
  }

  /**
   * Claim up to `batch` pending rows no other relay holds, in one statement: each relay of a store (one per process
   * of the distributed mode) publishes its own rows. SKIP LOCKED keeps two claims from waiting on each other; a claim
   * outlives the longest a publish is retried, so only a relay that died or stalled loses its rows to another.
   */
  private async claim(batch: number): Promise<OutboxRow[]> {
    const { rows } = await this.db.query<OutboxRow>(
      `update outbox_events o set claimed_until = now() + make_interval(secs => $2)
         from (${PENDING} and (claimed_until is null or claimed_until < now()) order by seq limit $1 for update skip locked) c
        where o.seq = c.seq
       returning o.seq, o.id, o.subject, o.payload, o.traceparent`,
      [batch, CLAIM_SECONDS],
    );
    // An update returns its rows in no set order: the stream gets them in the outbox's.
    return rows.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
  }

  /** The rows published last marked so, on their own: a flush that settles, and a relay that stops. */
  private async markPublished() {
    if (!this.unmarked.length) return;
    await this.marking((seqs) =>
      this.db.query(
        'update outbox_events set published_at = now(), claimed_until = null where seq = any($1::bigint[])',
        [seqs],
      ),
    );
  }

  /**
   * One event on the stream, with the trace it was written in as its `traceparent` header (a PRODUCER span while
   * tracing is on).
   */
  private async publish(subject: string, data: Uint8Array, id: string, traceparent: string | null) {
    if (!traceparent) return this.bus.publishEvent(subject, data, id);
    const span = tracing.on
      ? startSpan(
          `publish ${subject}`,
          SpanKind.PRODUCER,
          { 'messaging.system': 'nats', 'messaging.destination.name': subject, 'messaging.message.id': id },
          contextFrom(traceparent),
        )
      : undefined;
    try {
      await this.bus.publishEvent(subject, data, id, { traceparent: (span && spanTraceparent(span)) || traceparent });
      endSpan(span);
    } catch (err) {
      endSpan(span, err);
      throw err;
    }
  }

  async pending(): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>(
      'select count(*)::text as n from outbox_events where published_at is null',
    );
    return Number(rows[0]?.n ?? 0);
  }

  async stop() {
    this.stopped = true;
    relays.delete(this);
    clearTimeout(this.timer);
    clearTimeout(this.soon);
    await this.flush().catch(() => undefined);
    this.rounds.idle(Infinity);
  }
}
