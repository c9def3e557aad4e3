import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createInbox, headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { EVENT_STREAM, EVENT_SUBJECTS } from '@vcs/contract';
import { BusError, type Bus, type BusMessage, type ConsumeOptions, type EventDelivery, type Headers, type Responder } from './types.ts';

const ms = (n: number) => n * 1_000_000; // nanoseconds

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

/**
 * The distributed bus on NATS: one connection per process, muxed inbox for replies,
 * queue groups so replicas share load, and a JetStream stream for events (deduplicated by Nats-Msg-Id).
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private js: JetStreamClient;
  private subs = new Set<{ drain(): Promise<void> }>();
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
  private pending = new Map<string, { resolve(m: BusMessage): void; reject(e: BusError): void; timer: NodeJS.Timeout; subject: string }>();
  /**
   * Publishes wait for the end of this event-loop turn and go out together. nats.js flushes its buffer once per
   * microtask checkpoint, and every HTTP request (or every reply a pillar finishes) is its own checkpoint, so
   * without this each request and each reply was its own write(2) on the socket: under load, dozens per turn.
   */
  private outgoing: { subject: string; data: Uint8Array; reply?: string; headers?: MsgHdrs; failed?(err: Error): void; sent?(): void }[] = [];
  private readonly publishOutgoing = () => {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const m of batch) {
      try { this.nc.publish(m.subject, m.data, { reply: m.reply, headers: m.headers }); } catch (err) { m.failed?.(err as Error); }
      m.sent?.();
    }
  };
  private publishSoon(m: NatsBus['outgoing'][number]) {
    if (this.outgoing.push(m) === 1) setImmediate(this.publishOutgoing);
  }
  /** False between a disconnect and the reconnect, so /readyz tells the truth during a NATS outage. */
  private connected = true;
  private constructor(readonly nc: NatsConnection, private readonly ns: string) {
    this.js = jetstream(nc);
    this.stream = ns ? `${EVENT_STREAM}_${ns}` : EVENT_STREAM;
    this.inbox = `${createInbox()}.`;
    nc.subscribe(`${this.inbox}*`, { callback: (err, msg) => { if (!err) this.answered(msg); } });
    void nc.closed().then(() => {
      for (const [token, p] of this.pending) { this.pending.delete(token); clearTimeout(p.timer); p.reject(new BusError('closed', `bus closed before ${p.subject} answered`)); }
    });
    void (async () => {
      for await (const st of nc.status()) {
        if (st.type === 'disconnect' || st.type === 'reconnecting') this.connected = false;
        else if (st.type === 'reconnect') this.connected = true;
      }
    })().catch(() => undefined);
  }

  /** Subjects live under an optional namespace so test runs (or tenants) on one server never see each other. */
  private s(subject: string) { return this.ns ? `${this.ns}.${subject}` : subject; }

  /**
   * Connect, waiting for the server up to `startupTimeoutMs` (it may still be starting); an unreachable server is
   * then an error that says so, not a silent wait. Once connected, it reconnects for ever.
   */
  static async connect(url: string, name: string, namespace = '', startupTimeoutMs = 30_000): Promise<NatsBus> {
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`NATS at ${url} did not answer within ${startupTimeoutMs / 1000} s (STARTUP_TIMEOUT_MS): is it running, and is NATS_URL right?`)), startupTimeoutMs);
      timer.unref();
    });
    const nc = await Promise.race([connect({
      servers: url, name,
      // nats.js builds an Error with a stack per request unless told not to: a real cost on the hot path.
      noAsyncTraces: true,
      maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true,
    }), gaveUp]).finally(() => clearTimeout(timer));
    const bus = new NatsBus(nc, namespace);
    await bus.ensureStream();
    return bus;
  }

  private async ensureStream() {
    const jsm = await jetstreamManager(this.nc);
    const config = {
      name: this.stream, subjects: [this.s(EVENT_SUBJECTS)], storage: StorageType.File,
      duplicate_window: ms(2 * 60 * 1000), max_age: ms(7 * 24 * 3600 * 1000),
    };
    try {
      await jsm.streams.info(this.stream);
      return;
    } catch { /* not there yet: make it */ }
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // Another replica may have made it meanwhile; if it is still not there, say why, once, and stop.
      if (await jsm.streams.info(this.stream).then(() => true, () => false)) return;
      throw new Error(`the event stream ${this.stream} (subjects ${config.subjects[0]}) cannot be made on this NATS: ${(err as Error).message}. `
        + 'If another stream already takes overlapping subjects, give this deployment its own NATS_NAMESPACE or remove that stream.');
    }
  }

  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: Headers }): Promise<BusMessage> {
    if (this.nc.isClosed()) return Promise.reject(new BusError('closed', 'bus is closed'));
    const token = (this.nextToken = (this.nextToken + 1) % Number.MAX_SAFE_INTEGER).toString(36);
    return new Promise<BusMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new BusError('timeout', `no reply on ${subject} within ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
      this.pending.set(token, { resolve, reject, timer, subject });
      this.publishSoon({
        subject: this.s(subject), data, reply: this.inbox + token, headers: toHeaders(opts.headers),
        failed: (err) => {
          if (!this.pending.delete(token)) return;
          clearTimeout(timer);
          reject(new BusError('closed', `request on ${subject} failed: ${err.message}`));
        },
      });
    });
  }

  /** A reply on the muxed inbox; the server's empty 503 status message means no replica is subscribed. */
  private answered(msg: Msg) {
    const token = msg.subject.slice(this.inbox.length);
    const p = this.pending.get(token);
    if (!p) return; // timed out already
    this.pending.delete(token);
    clearTimeout(p.timer);
    if (msg.data.length === 0 && msg.headers?.code === 503) p.reject(new BusError('no-responders', `no responders on ${p.subject}`));
    else p.resolve({ data: msg.data, headers: fromHeaders(msg.headers) });
  }

  serve(subject: string, queue: string, responder: Responder) {
    const sub = this.nc.subscribe(this.s(subject), {
      queue,
      callback: (err, msg) => {
        if (err) return;
        this.inflight++;
        // The responder is async; a rejection must still reply, or the caller waits for a time-out.
        // A request counts as in flight until its reply has been handed to the connection.
        const reply = msg.reply;
        const sent = () => { this.inflight--; if (this.inflight === 0) this.idle?.(); };
        if (!reply) { responder({ data: msg.data, headers: fromHeaders(msg.headers) }).catch(() => undefined).finally(sent); return; }
        responder({ data: msg.data, headers: fromHeaders(msg.headers) }).then(
          (r) => this.publishSoon({ subject: reply, data: r.data, headers: toHeaders(r.headers), sent }),
          () => this.publishSoon({ subject: reply, data: new Uint8Array(), headers: toHeaders({ status: '500' }), sent }),
        );
      },
    });
    this.subs.add(sub);
    return { stop: () => { if (this.subs.delete(sub) && !this.nc.isClosed()) sub.drain().catch(() => undefined); } };
  }

  async publishEvent(subject: string, data: Uint8Array, msgId: string) {
    await this.js.publish(this.s(subject), data, { msgID: msgId, timeout: 5000 });
  }

  async consumeEvents(opts: ConsumeOptions, handler: (d: EventDelivery) => Promise<void>) {
    const jsm = await jetstreamManager(this.nc);
    const cfg = {
      durable_name: opts.durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All,
      filter_subject: this.s(opts.filter), ack_wait: ms(opts.ackWaitMs ?? 30_000), max_deliver: -1,
    };
    const exists = await jsm.consumers.info(this.stream, opts.durable).then(() => true, () => false);
    if (!exists) {
      const replaced = (await Promise.all((opts.continues ?? []).map((d) => jsm.consumers.info(this.stream, d).catch(() => null)))).filter((c) => c !== null);
      const from = replaced.length ? Math.min(...replaced.map((c) => c.ack_floor.stream_seq)) + 1 : 0;
      const start = from ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : {};
      try { await jsm.consumers.add(this.stream, { ...cfg, ...start }); } catch { /* raced: another replica made it */ }
      for (const c of replaced) await jsm.consumers.delete(this.stream, c.name).catch(() => false);
    }
    const consumer = await this.js.consumers.get(this.stream, opts.durable);
    const messages = await consumer.consume({ max_messages: 64 });
    const done = (async () => {
      for await (const m of messages) {
        try {
          await handler({
            data: m.data, subject: this.ns ? m.subject.slice(this.ns.length + 1) : m.subject, redeliveryCount: m.info.deliveryCount,
            ack: () => m.ack(), nak: (delayMs) => m.nak(delayMs),
          });
        } catch {
          m.nak(1000);
        }
      }
    })();
    return { stop: async () => { await Promise.resolve(messages.close()).catch(() => undefined); await done.catch(() => undefined); } };
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

  broadcast(subject: string, data: Uint8Array) { this.nc.publish(this.s(subject), data); }
  onBroadcast(subject: string, handler: (d: Uint8Array) => void) {
    const sub = this.nc.subscribe(this.s(subject), { callback: (err, msg) => { if (!err) handler(msg.data); } });
    return { stop: () => { if (!this.nc.isClosed()) sub.unsubscribe(); } };
  }
  isConnected() { return this.connected && !this.nc.isClosed() && !this.nc.isDraining() && this.nc.info !== undefined; }
  /** Stop taking requests, let the ones being answered reply (up to 10 s), then drain and close. */
  async drain() {
    if (this.nc.isClosed()) return;
    const subs = [...this.subs];
    this.subs.clear();
    await Promise.all(subs.map((s) => s.drain().catch(() => undefined)));
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => { this.idle = resolve; setTimeout(resolve, 10_000).unref(); });
    }
    await this.nc.drain().catch(() => undefined);
  }
}
