import { platformEvent } from '@vcs/contract';
import {
  contextFrom,
  endSpan,
  mergeWrites,
  SpanKind,
  spanTraceparent,
  startSpan,
  IdleRounds,
  type Idles,
  type Services,
  writeEvents,
  type BulkWrite,
  type Queryable,
  type Statement,
} from '@vcs/platform';

// A success's writes, merged across the deliveries of a group commit (store/groupCommit.ts).
const attemptInsert: BulkWrite = {
  sql: `insert into webhook_attempts(delivery_id, attempted_at, status_code, latency_ms, outcome, response_snippet)
        select * from unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[])`,
};
const deliveredUpdate: BulkWrite = {
  sql: `update webhook_deliveries d
           set status = 'delivered', attempt_count = t.n, delivered_at = t.at,
               next_attempt_at = null, locked_until = null
          from unnest($1::text[], $2::int[], $3::timestamptz[]) as t(id, n, at) where d.id = t.id`,
};
/** The VIN of an event's body, for the Webhook.failed that reports its delivery (a failure's path only). */
const vinOf = (body: string): string | null => {
  try {
    const v = (JSON.parse(body) as { vin?: unknown }).vin;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
};
const endpointRecovered: BulkWrite = {
  sql: 'update webhook_endpoints set failing_since = null where id = any($1::text[]) and failing_since is not null',
};
import { deliveryConfig, nextDelayMs, type DeliveryConfig, type WebhookServices } from './config.ts';
import { postDelivery, type PostResult } from './post.ts';
import { signatureHeader } from './signature.ts';

interface Claimed {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempt_count: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_until: string | Date | null;
  endpoint_status: string;
  failing_since: string | Date | null;
  /** The trace of the event's fan-out (null while tracing is off): each attempt is a span in it. */
  traceparent: string | null;
}

/** The sender loop over Postgres's delivery rows; the event consumer kicks it when it adds some. */
export function startWebhookSender(services: WebhookServices): DeliverySender {
  return new DeliverySender(services, deliveryConfig(services.settings)).start();
}

/**
 * Sends due deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED and leased (locked_until), so any
 * number of workers share the work and a worker that dies mid-send only delays its rows by the lease.
 * In-flight sends are capped per endpoint and overall, so one slow endpoint never holds up the rest.
 */
export class DeliverySender implements Idles {
  private inFlight = new Map<string, number>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling = false;
  private again = false;
  private running = new Set<Promise<void>>();
  /** Those waiting on `onIdle`, answered at the end of a poll begun after they asked that finds nothing to do. */
  private rounds = new IdleRounds();
  /** Attempts finished since start (Idles, @vcs/platform). */
  done = 0;

  constructor(
    private services: Services,
    private cfg: DeliveryConfig,
  ) {}

  start() {
    const tick = () => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.cfg.pollMs);
    };
    tick();
    return this;
  }

  kick() {
    if (this.stopped) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = true;
    const poll = this.rounds.begin();
    this.poll()
      .then((nothingDue) => {
        // Idle: this poll found nothing due, nothing is in flight, and no poll is asked for after it.
        if (nothingDue && !this.total && !this.again) this.rounds.idle(poll);
      })
      .catch((err) => this.services.log.debug({ err }, 'webhook sender poll failed'))
      .finally(() => {
        this.polling = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Resolves once no delivery is due (by the injected clock) and none is in flight: at the end of the first poll
   * begun after the call that finds nothing due with every send finished (each finished send polls again). A retry
   * scheduled later is not due: a test reaches it by moving its clock and asking again. The name and meaning are
   * p-queue's `onIdle`. It polls at once itself, so it never waits for the poll interval; a stop resolves it.
   */
  onIdle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const idle = this.rounds.wait();
    this.kick();
    return idle;
  }

  /** One look for due deliveries, claiming what there is room for; true when nothing was due. */
  private async poll(): Promise<boolean> {
    const room = this.cfg.poolSize - this.total;
    if (room <= 0) return false;
    const busy = [...this.inFlight].filter(([, n]) => n >= this.cfg.perEndpointConcurrency).map(([id]) => id);
    const now = this.services.clock.now();
    // A cheap look first: an idle sender costs one indexed read, not a locking transaction.
    const due = await this.services.db.query(
      `select 1 from webhook_deliveries
        where status = 'pending' and next_attempt_at <= $1 and (locked_until is null or locked_until < $1)
        limit 1`,
      [now.toISOString()],
    );
    if (!due.rows.length) return true;
    const lease = new Date(now.getTime() + this.cfg.timeoutMs + 1_000).toISOString();
    // One statement, atomic on its own: no transaction held open across round trips (PGlite has one connection).
    const rows = (
      await this.services.db.query<Claimed>(
        `with due as (
         select d.id from webhook_deliveries d
          where d.status = 'pending' and d.next_attempt_at <= $1 and (d.locked_until is null or d.locked_until < $1)
            and not (d.endpoint_id = any($3::text[]))
          order by d.next_attempt_at limit $2 for update skip locked)
       update webhook_deliveries d set locked_until = $4 from due, webhook_endpoints e
        where d.id = due.id and e.id = d.endpoint_id
       returning d.id, d.account_id, d.endpoint_id, d.event_id, d.event_type, d.attempt_count,
                 coalesce((select ev.body from webhook_events ev where ev.id = d.event_id), d.payload::text) as body,
                 (select ev.traceparent from webhook_events ev where ev.id = d.event_id) as traceparent,
                 e.url, e.secret, e.previous_secret, e.previous_until, e.status as endpoint_status, e.failing_since`,
        [now.toISOString(), room, busy, lease],
      )
    ).rows;
    // Rows of an endpoint beyond its share are handed back at once for the next poll.
    const over: string[] = [];
    for (const row of rows) {
      const n = this.inFlight.get(row.endpoint_id) ?? 0;
      if (n >= this.cfg.perEndpointConcurrency) {
        over.push(row.id);
        continue;
      }
      this.inFlight.set(row.endpoint_id, n + 1);
      this.total++;
      const p = this.send(row)
        .catch((err) => this.services.log.warn({ err, delivery: row.id }, 'webhook send failed'))
        .finally(() => {
          const left = (this.inFlight.get(row.endpoint_id) ?? 1) - 1;
          if (left) this.inFlight.set(row.endpoint_id, left);
          else this.inFlight.delete(row.endpoint_id);
          this.total--;
          this.done++;
          this.running.delete(p);
          this.kick();
        });
      this.running.add(p);
    }
    if (over.length)
      await this.services.db.query('update webhook_deliveries set locked_until = null where id = any($1::text[])', [
        over,
      ]);
    if (rows.length === room && over.length < rows.length) this.again = true;
    return false;
  }

  private async send(row: Claimed) {
    const now = this.services.clock.now();
    if (row.endpoint_status !== 'active') {
      await this.services.db.query(
        `update webhook_deliveries set status = 'failed', locked_until = null, next_attempt_at = null where id = $1`,
        [row.id],
      );
      return;
    }
    // The event's bytes as the stream carried them (webhook_events), never serialized again: what is signed is
    // what was emitted.
    const { body } = row;
    const secrets = [row.secret];
    if (row.previous_secret && row.previous_until && new Date(row.previous_until) > now)
      secrets.push(row.previous_secret);
    const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const headers: Record<string, string> = {
      'webhook-id': row.event_id,
      'webhook-timestamp': String(at.getTime() / 1000),
      'webhook-signature': signatureHeader(secrets, row.event_id, at, body),
    };
    // Tracing on and the event traced: the attempt is a span of the event's trace, and the receiver gets its
    // traceparent.
    const span = row.traceparent
      ? startSpan(
          `webhook deliver ${row.event_type}`,
          SpanKind.CLIENT,
          { 'vcs.delivery': row.id, 'vcs.endpoint': row.endpoint_id, 'vcs.attempt': row.attempt_count + 1 },
          contextFrom(row.traceparent),
        )
      : undefined;
    if (span) headers.traceparent = spanTraceparent(span) ?? row.traceparent!;
    const result = await postDelivery(row.url, headers, body, {
      timeoutMs: this.cfg.timeoutMs,
      capBytes: this.cfg.responseCapBytes,
      now: () => this.services.clock.now(),
      allowPrivate: this.cfg.allowPrivateTargets,
      allowLoopback: this.cfg.allowLoopbackTargets,
    });
    endSpan(span, result.statusCode !== null && result.statusCode < 300 ? undefined : result.outcome, {
      'http.response.status_code': result.statusCode ?? 0,
    });
    // A success is known in full up front: it joins other deliveries' records in one commit (group commit). A
    // failure reads what it changed (was the endpoint disabled just now?), so it takes a transaction of its own.
    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300)
      await this.services.db.batch(this.delivered(row, result));
    else await this.services.db.tx((q) => this.record(q, row, result));
  }

  private attempt(row: Claimed, r: PostResult, now: Date): Statement {
    return { bulk: attemptInsert, row: [row.id, now.toISOString(), r.statusCode, r.latencyMs, r.outcome, r.snippet] };
  }

  /** A 2xx: the attempt, the delivery delivered, the endpoint no longer failing (each many rows in one statement). */
  private delivered(row: Claimed, r: PostResult): Statement[] {
    const now = this.services.clock.now();
    return [
      this.attempt(row, r, now),
      { bulk: deliveredUpdate, row: [row.id, row.attempt_count + 1, now.toISOString()] },
      // Always, not only when the claimed row said failing: another delivery may have failed since the claim.
      { bulk: endpointRecovered, row: [row.endpoint_id] },
    ];
  }

  /** Record a failed attempt and decide what comes next: retry later, or failed (with its event). */
  private async record(q: Queryable, row: Claimed, r: PostResult) {
    const now = this.services.clock.now();
    for (const st of mergeWrites([this.attempt(row, r, now)])) await q.query(st.sql, st.params);
    const attempts = row.attempt_count + 1;
    const failingSince = row.failing_since ? new Date(row.failing_since) : now;
    await q.query('update webhook_endpoints set failing_since = coalesce(failing_since, $2) where id = $1', [
      row.endpoint_id,
      now.toISOString(),
    ]);
    const gone = r.statusCode === 410;
    const tooLong = now.getTime() - failingSince.getTime() >= this.cfg.disableAfterMs;
    if (gone || tooLong) {
      const reason = gone
        ? 'the endpoint answered 410 Gone'
        : `the endpoint has failed since ${failingSince.toISOString()}`;
      const disabled = await q.query(
        `update webhook_endpoints set status = 'disabled', disabled_reason = $2 where id = $1 and status = 'active'`,
        [row.endpoint_id, reason],
      );
      await this.fail(
        q,
        row,
        attempts,
        gone ? 'endpoint-gone' : 'endpoint-disabled',
        disabled.rowCount > 0 ? reason : undefined,
      );
      return;
    }
    let delay = nextDelayMs(this.cfg, attempts);
    if (delay === null) {
      await this.fail(q, row, attempts, 'attempts-exhausted');
      return;
    }
    if ((r.statusCode === 429 || r.statusCode === 503) && r.retryAfterMs !== null)
      delay = Math.min(r.retryAfterMs, 24 * 3_600_000);
    await q.query(
      'update webhook_deliveries set attempt_count = $2, next_attempt_at = $3, locked_until = null where id = $1',
      [row.id, attempts, new Date(now.getTime() + delay).toISOString()],
    );
  }

  private async fail(q: Queryable, row: Claimed, attempts: number, reason: string, endpointDisabled?: string) {
    await q.query(
      `update webhook_deliveries
          set status = 'failed', attempt_count = $2, next_attempt_at = null, locked_until = null
        where id = $1`,
      [row.id, attempts],
    );
    const occurredAt = this.services.clock.now().toISOString();
    const base = { occurredAt, account: row.account_id, capability: null, vin: vinOf(row.body), simulated: false };
    await writeEvents(q, [
      platformEvent('Webhook.failed@1', base, {
        reason,
        deliveryId: row.id,
        endpointId: row.endpoint_id,
        eventId: row.event_id,
        eventType: row.event_type,
        attempts,
        ...(endpointDisabled ? { endpointDisabled: true as const, disabledReason: endpointDisabled } : {}),
      }),
    ]);
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
    this.rounds.idle(Infinity);
  }
}
