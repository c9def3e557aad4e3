import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createInbox, headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
} from '@nats-io/jetstream';
import { EVENT_STREAM, EVENT_SUBJECTS } from '@vcs/contract';
import type { Logger } from 'pino';
import { ConfigError, redactUrl } from '../config.ts';
import { busState, consumerWatch } from '../metrics.ts';
import {
  BusError,
  type Bus,
  type BusMessage,
  type ConsumeOptions,
  type EventDelivery,
  type Headers,
  type Responder,
  type ServedAs,
  type ServiceIdentity,
  type BusLog,
  operationOf,
} from './types.ts';
import { MicroService, type EndpointFigures } from './micro.ts';
import { unframeReply } from './call.ts';

const ms = (n: number) => n * 1_000_000; // nanoseconds
/** Timed-out requests remembered for a late reply (NatsBus.late): enough for a burst, bounded under an outage. */
const LATE_KEPT = 1000;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/**
 * How our pull consumers pull (measured on a 3-node cluster: docs/decisions.md, "Consumers after a node loss").
 * nats.js's defaults (30 s expiry, 15 s heartbeat, then a consumer-info retry jittered over 15-45 s) left a
 * consumer idle for 30-48 s after its leader died; with these a lost pull is noticed in 2-3 s and made again at once.
 */
export const PULL = {
  maxMessages: 64,
  expiresMs: 5_000,
  idleHeartbeatMs: 1_000,
  restartMs: [250, 500, 1_000, 2_000],
} as const;
/** A JetStream publish is retried through a leader election for up to this long, each attempt bounded by the second. */
export const PUBLISH_RETRY = { boundMs: 20_000, attemptMs: 3_000, backoffMs: [100, 250, 500, 1_000] } as const;

/**
 * A publish failure worth retrying: nobody answered on the stream's subject (no leader during an election: a 503
 * status), the answer timed out (the server we were on went away), or JetStream said it is temporarily unavailable.
 */
export function retryablePublishError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown; api_error?: { code?: number } };
  if (e?.name === 'ClosedConnectionError') return false;
  if (e?.api_error?.code === 503) return true;
  return /no ?responders|timeout|timed out|503|temporarily unavailable|disconnect|reconnect|connection draining/i.test(
    `${e?.name ?? ''} ${e?.message ?? ''}`,
  );
}

function toHeaders(h?: Headers): MsgHdrs | undefined {
  if (!h) return undefined;
  const out = natsHeaders();
  for (const [k, v] of Object.entries(h)) out.set(k, v);
  return out;
}
function fromHeaders(h?: MsgHdrs): Headers {
  const out: Headers = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.get(k);
  return out;
}

export interface NatsOptions {
  /**
   * Replicas of the event stream when this process makes it (EVENT_STREAM_REPLICAS); an existing stream must have as
   * many.
   */
  replicas?: number;
  /** Where connection changes, consumer stalls and resumptions are said (one line each). */
  log?: Pick<Logger, 'info' | 'warn' | 'debug'>;
}
const silent: NonNullable<NatsOptions['log']> = { info() {}, warn() {}, debug() {} } as never;

/**
 * The distributed bus on NATS: one connection per process, muxed inbox for replies,
 * queue groups so replicas share load, and a JetStream stream for events (deduplicated by Nats-Msg-Id).
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private js: JetStreamClient;
  private subs = new Set<{ drain(): Promise<void> }>();
  /** Discoverable services by identity (one per pillar started on this bus). */
  private micro = new Map<ServiceIdentity, MicroService>();
  /** Requests being answered right now: drain() waits for them so SIGTERM drops no accepted request. */
  private inflight = 0;
  private idle: (() => void) | undefined;

  private readonly stream: string;
  /**
   * Request-reply over one muxed inbox (`_INBOX.<nuid>.<n>`), as nats.js does, but without its per-request
   * deferred, timer wrapper and the `RequestError("cancelled")` it builds after every answered request:
   * that error alone was ~4 % of the gateway's CPU under load.
   */
  private readonly inbox: string;
  private nextToken = 0;
  private pending = new Map<
    string,
    { resolve(m: BusMessage): void; reject(e: BusError): void; timer: NodeJS.Timeout; subject: string }
  >();
  /**
   * Publishes wait for the end of this event-loop turn and go out together. nats.js flushes its buffer once per
   * microtask checkpoint, and every HTTP request (or every reply a pillar finishes) is its own checkpoint, so
   * without this each request and each reply was its own write(2) on the socket: under load, dozens per turn.
   */
  private outgoing: {
    subject: string;
    data: Uint8Array;
    reply?: string;
    headers?: MsgHdrs;
    failed?(err: Error): void;
    sent?(): void;
  }[] = [];
  private readonly publishOutgoing = () => {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const m of batch) {
      try {
        this.nc.publish(m.subject, m.data, { reply: m.reply, headers: m.headers });
      } catch (err) {
        m.failed?.(err as Error);
      }
      m.sent?.();
    }
  };
  private publishSoon(m: NatsBus['outgoing'][number]) {
    if (this.outgoing.push(m) === 1) setImmediate(this.publishOutgoing);
  }
  /** False between a disconnect and the reconnect, so /readyz tells the truth during a NATS outage. */
  private connected = true;
  private readonly log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  readonly logger?: BusLog;
  /**
   * Requests that timed out, for a minute (at most LATE_KEPT): a reply that comes after all names the replica that was
   * slow, which a time-out alone cannot (NATS hands a request to one replica of the queue group and says not which).
   */
  private late = new Map<string, { subject: string; sentAt: number; data: Uint8Array }>();
  private readonly replicas: number;
  /** Restarts every consumer's pull: after a reconnect, the pulls the old server held are gone. */
  private readonly repull = new Set<() => void>();
  private constructor(
    readonly nc: NatsConnection,
    private readonly ns: string,
    opts: NatsOptions,
  ) {
    const log = (this.log = opts.log ?? silent);
    this.logger = opts.log;
    this.replicas = opts.replicas ?? 1;
    this.js = jetstream(nc);
    this.stream = ns ? `${EVENT_STREAM}_${ns}` : EVENT_STREAM;
    this.inbox = `${createInbox()}.`;
    nc.subscribe(`${this.inbox}*`, {
      callback: (err, msg) => {
        if (!err) this.answered(msg);
      },
    });
    void nc.closed().then(() => {
      for (const [token, p] of this.pending) {
        this.pending.delete(token);
        clearTimeout(p.timer);
        p.reject(new BusError('closed', `bus closed before ${p.subject} answered`));
      }
    });
    void (async () => {
      let lostAt = 0;
      for await (const st of nc.status()) {
        const server = 'server' in st ? String(st.server) : undefined;
        if (st.type === 'disconnect') {
          lostAt = Date.now();
          this.connected = false;
          busState.connected.set(0);
          log.warn({ server }, 'NATS disconnected; reconnecting');
        } else if (st.type === 'reconnecting') {
          this.connected = false;
        } else if (st.type === 'reconnect') {
          this.connected = true;
          busState.connected.set(1);
          busState.reconnects.inc();
          log.info({ server, afterMs: lostAt ? Date.now() - lostAt : undefined }, 'NATS reconnected');
          for (const r of this.repull) r();
        } else if (st.type === 'error' || st.type === 'ldm') {
          log.warn(
            { server, status: st.type, detail: 'error' in st ? String(st.error) : undefined },
            st.type === 'ldm' ? 'NATS server entering lame duck mode' : 'NATS connection error',
          );
        }
      }
    })().catch(() => undefined);
  }

  /** Subjects live under an optional namespace so test runs (or tenants) on one server never see each other. */
  private s(subject: string) {
    return this.ns ? `${this.ns}.${subject}` : subject;
  }

  /**
   * Connect, waiting for the server up to `startupTimeoutMs` (it may still be starting); an unreachable server is
   * then an error that says so, not a silent wait. Once connected, it reconnects for ever.
   */
  static async connect(
    url: string,
    name: string,
    namespace = '',
    startupTimeoutMs = 30_000,
    opts: NatsOptions = {},
  ): Promise<NatsBus> {
    let timer: NodeJS.Timeout | undefined;
    // A seed list: nats.js tries each (in random order, so replicas spread over the nodes) until one answers.
    const servers = url
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    const named = servers.map(redactUrl).join(', ');
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `NATS at ${named} did not answer within ${startupTimeoutMs / 1000} s (STARTUP_TIMEOUT_MS): ` +
                'is it running, and is NATS_URL right?',
            ),
          ),
        startupTimeoutMs,
      );
      timer.unref();
    });
    const nc = await Promise.race([
      connect({
        servers,
        name,
        // nats.js builds an Error with a stack per request unless told not to: a real cost on the hot path.
        noAsyncTraces: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        waitOnFirstConnect: true,
        // A node that vanishes without closing its sockets (a container killed, a host lost) is noticed by unanswered
        // pings: every 2 s, two missed, rather than nats.js's default of two minutes.
        pingInterval: 2_000,
        maxPingOut: 2,
        // A dial to a node that is gone (a container killed: its address no longer answers, no refusal comes back)
        // gives up after 2 s and tries the next node, rather than waiting nats.js's default 20 s.
        timeout: 2_000,
      }),
      gaveUp,
    ]).finally(() => clearTimeout(timer));
    const bus = new NatsBus(nc, namespace, opts);
    busState.connected.set(1);
    await bus.ensureStream(startupTimeoutMs);
    return bus;
  }

  /**
   * Find or make the event stream. A cluster still electing its meta leader (every node just started) answers 503
   * or not at all: that is waited out up to the start-up time-out; anything else is said at once.
   */
  private async ensureStream(startupTimeoutMs: number) {
    const until = Date.now() + startupTimeoutMs;
    for (;;) {
      try {
        return await this.findOrMakeStream();
      } catch (err) {
        if (
          err instanceof ConfigError ||
          (err as { final?: boolean }).final ||
          !retryablePublishError(err) ||
          Date.now() > until
        )
          throw err;
        await sleep(500);
      }
    }
  }

  private async findOrMakeStream() {
    const jsm = await jetstreamManager(this.nc);
    const config = {
      name: this.stream,
      subjects: [this.s(EVENT_SUBJECTS)],
      storage: StorageType.File,
      duplicate_window: ms(2 * 60 * 1000),
      max_age: ms(7 * 24 * 3600 * 1000),
      num_replicas: this.replicas,
    };
    const existing = await jsm.streams.info(this.stream).catch((err: Error) => {
      if (/stream not found/i.test(err.message)) return null;
      throw err;
    });
    if (existing) return this.checkReplicas(existing.config.num_replicas);
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // Another replica may have made it meanwhile; if it is still not there, say why, once, and stop.
      const made = await jsm.streams.info(this.stream).catch(() => null);
      if (made) return this.checkReplicas(made.config.num_replicas);
      if (retryablePublishError(err)) throw err;
      throw Object.assign(
        new Error(
          `the event stream ${this.stream} (subjects ${config.subjects[0]}) cannot be made on this NATS: ` +
            `${(err as Error).message}. ` +
            (this.replicas > 1
              ? `EVENT_STREAM_REPLICAS=${this.replicas} needs a NATS cluster of at least ${this.replicas} ` +
                'JetStream servers. '
              : '') +
            'If another stream already takes overlapping subjects, give this deployment its own NATS_NAMESPACE ' +
            'or remove that stream.',
        ),
        { final: true },
      );
    }
  }

  /**
   * The stream is made once, by whichever process comes first; a process set for another replica count must not
   * carry on believing its setting holds (an operator would think events are on three servers when they are on one).
   */
  private checkReplicas(actual: number | undefined) {
    const have = actual || 1;
    if (have === this.replicas) return;
    throw new ConfigError(
      `config error: EVENT_STREAM_REPLICAS: ${this.replicas}, but the event stream ${this.stream} on this NATS ` +
        `has ${have} replica${have === 1 ? '' : 's'}; ` +
        `set EVENT_STREAM_REPLICAS=${have}, ` +
        `or change the stream first (nats stream edit ${this.stream} --replicas ${this.replicas})`,
    );
  }

  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: Headers }): Promise<BusMessage> {
    if (this.nc.isClosed()) return Promise.reject(new BusError('closed', 'bus is closed'));
    const token = (this.nextToken = (this.nextToken + 1) % Number.MAX_SAFE_INTEGER).toString(36);
    const sentAt = performance.now();
    return new Promise<BusMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        this.keepLate(token, { subject, sentAt, data });
        reject(new BusError('timeout', `no reply on ${subject} within ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
      this.pending.set(token, { resolve, reject, timer, subject });
      this.publishSoon({
        subject: this.s(subject),
        data,
        reply: this.inbox + token,
        headers: toHeaders(opts.headers),
        failed: (err) => {
          if (!this.pending.delete(token)) return;
          clearTimeout(timer);
          reject(new BusError('closed', `request on ${subject} failed: ${err.message}`));
        },
      });
    });
  }

  /** A reply on the muxed inbox; the server's empty 503 status message means no replica is subscribed. */
  private keepLate(token: string, l: { subject: string; sentAt: number; data: Uint8Array }) {
    for (const [t, old] of this.late) {
      if (this.late.size < LATE_KEPT && l.sentAt - old.sentAt < 60_000) break;
      this.late.delete(t); // oldest first: a Map keeps insertion order
    }
    this.late.set(token, l);
  }

  /** A reply to a request that timed out: one line naming the replica that sent it and how late it was. */
  private answeredLate(token: string, msg: Msg) {
    const l = this.late.get(token);
    if (!l) return;
    this.late.delete(token);
    const replica = unframeReply(msg.data)?.servedBy;
    let requestId: unknown;
    try {
      requestId = JSON.parse(Buffer.from(l.data).toString('utf8'))?.ctx?.requestId;
    } catch {
      /* not a { input, ctx } request */
    }
    this.logger?.warn(
      { ...operationOf(l.subject), replica, requestId, afterMs: Math.round(performance.now() - l.sentAt) },
      'bus reply came after its time-out',
    );
  }

  private answered(msg: Msg) {
    const token = msg.subject.slice(this.inbox.length);
    const p = this.pending.get(token);
    if (!p) return this.answeredLate(token, msg); // timed out already
    this.pending.delete(token);
    clearTimeout(p.timer);
    if (msg.data.length === 0 && msg.headers?.code === 503)
      p.reject(new BusError('no-responders', `no responders on ${p.subject}`));
    else p.resolve({ data: msg.data, headers: fromHeaders(msg.headers) });
  }

  serve(subject: string, queue: string, responder: Responder, as?: ServedAs) {
    if (as)
      return this.microService(as.service).add(as.endpoint, this.s(subject), queue, (msg, figures) =>
        this.answer(msg, responder, figures),
      );
    const sub = this.nc.subscribe(this.s(subject), {
      queue,
      callback: (err, msg) => {
        if (!err) this.answer(msg, responder);
      },
    });
    this.subs.add(sub);
    return {
      stop: () => {
        if (this.subs.delete(sub) && !this.nc.isClosed()) sub.drain().catch(() => undefined);
      },
    };
  }

  /** The discoverable service of an identity (bus/micro.ts), made when its first endpoint is served. */
  private microService(identity: ServiceIdentity): MicroService {
    let service = this.micro.get(identity);
    if (!service) {
      // Its namespace too: deployments sharing one NATS answer the same `$SRV` subjects.
      service = new MicroService(this.nc, { ...identity, metadata: { ...identity.metadata, namespace: this.ns } });
      this.micro.set(identity, service);
    }
    return service;
  }

  /**
   * Answer one request. The responder is async; a rejection must still reply, or the caller waits for a time-out.
   * A request counts as in flight until its reply has been handed to the connection; then, for a discoverable
   * endpoint, it is counted in its figures with the time it took.
   */
  private answer(msg: Msg, responder: Responder, figures?: EndpointFigures) {
    this.inflight++;
    const began = figures ? performance.now() : 0;
    const reply = msg.reply;
    let failed: string | undefined;
    const sent = () => {
      figures?.answered(performance.now() - began, failed);
      this.inflight--;
      if (this.inflight === 0) this.idle?.();
    };
    const answering = responder({ data: msg.data, headers: fromHeaders(msg.headers) });
    if (!reply) {
      answering
        .then(
          (r) => void (failed = r.failed),
          (err: Error) => void (failed = err.message),
        )
        .finally(sent);
      return;
    }
    answering.then(
      (r) => {
        failed = r.failed;
        this.publishSoon({ subject: reply, data: r.data, headers: toHeaders(r.headers), sent });
      },
      (err: Error) => {
        failed = `the responder failed: ${err?.message}`;
        this.publishSoon({ subject: reply, data: new Uint8Array(), headers: toHeaders({ status: '500' }), sent });
      },
    );
  }

  /**
   * Publish with the event id as Nats-Msg-Id, retried through a leader election (503 no responders, a time-out
   * when our server went away) for up to PUBLISH_RETRY.boundMs: the stream drops the copies a retry makes by id.
   */
  async publishEvent(subject: string, data: Uint8Array, msgId: string, headers?: Headers) {
    const until = Date.now() + PUBLISH_RETRY.boundMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.js.publish(this.s(subject), data, {
          msgID: msgId,
          timeout: PUBLISH_RETRY.attemptMs,
          headers: toHeaders(headers),
        });
        return;
      } catch (err) {
        const wait = PUBLISH_RETRY.backoffMs[Math.min(attempt, PUBLISH_RETRY.backoffMs.length - 1)]!;
        if (!retryablePublishError(err) || this.nc.isClosed() || Date.now() + wait > until) throw err;
        busState.publishRetries.inc();
        await sleep(wait);
      }
    }
  }

  async consumeEvents(opts: ConsumeOptions, handler: (d: EventDelivery) => Promise<void>) {
    const jsm = await jetstreamManager(this.nc);
    const cfg = {
      durable_name: opts.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: this.s(opts.filter),
      ack_wait: ms(opts.ackWaitMs ?? 30_000),
      max_deliver: -1,
    };
    const existing = await jsm.consumers.info(this.stream, opts.durable).catch(() => null);
    // A durable made under another filter takes this one from now on (NATS 2.9 updates a consumer's filter in place).
    if (existing && existing.config.filter_subject !== cfg.filter_subject)
      await jsm.consumers.update(this.stream, opts.durable, { filter_subject: cfg.filter_subject }).catch(() => null);
    if (!existing) {
      const replaced = (
        await Promise.all((opts.continues ?? []).map((d) => jsm.consumers.info(this.stream, d).catch(() => null)))
      ).filter((c) => c !== null);
      const from = replaced.length ? Math.min(...replaced.map((c) => c.ack_floor.stream_seq)) + 1 : 0;
      const start = from ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : {};
      try {
        await jsm.consumers.add(this.stream, { ...cfg, ...start });
      } catch {
        /* raced: another replica made it */
      }
      for (const c of replaced) await jsm.consumers.delete(this.stream, c.name).catch(() => false);
    }
    const consumer = await this.js.consumers.get(this.stream, opts.durable);
    const watch = consumerWatch(opts.durable, () =>
      consumer.info().then(
        (i) => i.num_pending,
        () => undefined,
      ),
    );
    let stopped = false;
    let current: ConsumerMessages | undefined;
    let failures = 0;
    let stalledAt = 0;
    const stalled = (why: string) => {
      if (stalledAt) return;
      stalledAt = Date.now();
      watch.stalled(true);
      this.log.warn({ consumer: opts.durable, why }, 'event consumer stalled: pulling again');
    };
    const flowing = () => {
      failures = 0;
      if (!stalledAt) return;
      this.log.info({ consumer: opts.durable, afterMs: Date.now() - stalledAt }, 'event consumer resumed');
      stalledAt = 0;
      watch.stalled(false);
    };
    // A pull lives on the consumer's leader: when that node dies (or we lose our server), the pull is gone and
    // nats.js would wait out its expiry and then a consumer-info retry jittered over 0.5-1.5× the expiry. Instead a
    // missed heartbeat, a pull nobody answered (no leader yet) or a reconnect ends this pull and makes a new one.
    const restart = () => {
      void current?.close();
    };
    this.repull.add(restart);
    const pullOnce = async () => {
      const messages = (current = await consumer.consume({
        max_messages: PULL.maxMessages,
        expires: PULL.expiresMs,
        idle_heartbeat: PULL.idleHeartbeatMs,
      }));
      void (async () => {
        for await (const st of messages.status()) {
          if (
            st.type === 'heartbeats_missed' ||
            st.type === 'no_responders' ||
            st.type === 'consumer_deleted' ||
            st.type === 'consumer_not_found'
          ) {
            stalled(st.type);
            void messages.close();
            return;
          }
          if (st.type === 'heartbeat') flowing();
        }
      })().catch(() => undefined);
      for await (const m of messages) {
        flowing();
        watch.delivered();
        try {
          await handler({
            data: m.data,
            subject: this.ns ? m.subject.slice(this.ns.length + 1) : m.subject,
            redeliveryCount: m.info.deliveryCount,
            // Only a message with a `traceparent` (written in a trace) pays for a headers object.
            headers: m.headers?.has('traceparent') ? { traceparent: m.headers.get('traceparent') } : undefined,
            ack: () => m.ack(),
            nak: (delayMs) => m.nak(delayMs),
          });
        } catch {
          m.nak(1000);
        }
      }
    };
    const done = (async () => {
      while (!stopped) {
        try {
          await pullOnce();
        } catch (err) {
          stalled((err as Error).message);
        }
        if (stopped || this.nc.isClosed()) return;
        await sleep(PULL.restartMs[Math.min(failures++, PULL.restartMs.length - 1)]!);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        this.repull.delete(restart);
        watch.remove();
        await Promise.resolve(current?.close()).catch(() => undefined);
        await done.catch(() => undefined);
      },
    };
  }

  /** The stream's durable consumers (for tests and operators). */
  async consumerNames(): Promise<string[]> {
    const jsm = await jetstreamManager(this.nc);
    const names: string[] = [];
    for await (const c of jsm.consumers.list(this.stream)) names.push(c.name);
    return names.sort();
  }

  /** Delete this namespace's event stream: test runs and benches on a shared server clean up after themselves. */
  async deleteStream() {
    const jsm = await jetstreamManager(this.nc);
    await jsm.streams.delete(this.stream).catch(() => false);
  }

  broadcast(subject: string, data: Uint8Array) {
    this.nc.publish(this.s(subject), data);
  }
  onBroadcast(subject: string, handler: (d: Uint8Array) => void) {
    const sub = this.nc.subscribe(this.s(subject), {
      callback: (err, msg) => {
        if (!err) handler(msg.data);
      },
    });
    return {
      stop: () => {
        if (!this.nc.isClosed()) sub.unsubscribe();
      },
    };
  }
  isConnected() {
    return this.connected && !this.nc.isClosed() && !this.nc.isDraining() && this.nc.info !== undefined;
  }
  /** Stop taking requests, let the ones being answered reply (up to 10 s), then drain and close. */
  async drain() {
    if (this.nc.isClosed()) return;
    const subs = [...this.subs];
    this.subs.clear();
    await Promise.all([
      ...subs.map((s) => s.drain().catch(() => undefined)),
      ...[...this.micro.values()].map((m) => m.stop().catch(() => undefined)),
    ]);
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        setTimeout(resolve, 10_000).unref();
      });
    }
    await this.nc.drain().catch(() => undefined);
  }
}
