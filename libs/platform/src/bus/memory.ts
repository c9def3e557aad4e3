import {
  BusError,
  type Bus,
  type BusLog,
  type BusMessage,
  type ConsumeOptions,
  type EventDelivery,
  type Headers,
  type Responder,
} from './types.ts';
import type { Idles } from '../events/idle.ts';

interface Stored {
  seq: number;
  subject: string;
  data: Uint8Array;
  msgId: string;
  headers?: Headers;
}

function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== '*' && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

/**
 * The embedded bus: same contract as NATS inside one process. Request-reply round-robins over
 * responders of a queue; the event stream is an in-memory log with durable cursors and redelivery.
 */
export class MemoryBus implements Bus, Idles {
  readonly kind = 'memory' as const;
  /** `logger`: where calls that go unanswered are said (bus/call.ts). */
  constructor(readonly logger?: BusLog) {}
  private responders = new Map<string, { queue: string; fn: Responder }[]>();
  private rr = new Map<string, number>();
  private log: Stored[] = [];
  private seen = new Set<string>();
  private consumers = new Set<{ wake(): void; idle(): boolean }>();
  private idleWaiters: (() => void)[] = [];
  /** Deliveries acked or naked so far (events/idle.ts). */
  done = 0;
  /** Deliveries handed to each durable so far: what its filter let through (a test counts a paid call's). */
  readonly deliveredTo = new Map<string, number>();
  private fanout = new Map<string, Set<(d: Uint8Array) => void>>();
  private closed = false;

  async request(
    subject: string,
    data: Uint8Array,
    opts: { timeoutMs: number; headers?: Headers },
  ): Promise<BusMessage> {
    if (this.closed) throw new BusError('closed', 'bus is closed');
    const list = this.responders.get(subject);
    if (!list?.length) throw new BusError('no-responders', `no responders on ${subject}`);
    const i = (this.rr.get(subject) ?? 0) % list.length;
    this.rr.set(subject, i + 1);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new BusError('timeout', `no reply on ${subject} within ${opts.timeoutMs} ms`)),
        opts.timeoutMs,
      );
    });
    try {
      const reply = await Promise.race([list[i]!.fn({ data, headers: opts.headers ?? {} }), timeout]);
      return { data: reply.data, headers: reply.headers ?? {} };
    } finally {
      clearTimeout(timer);
    }
  }

  serve(subject: string, queue: string, fn: Responder) {
    const entry = { queue, fn };
    const list = this.responders.get(subject) ?? [];
    list.push(entry);
    this.responders.set(subject, list);
    return {
      stop: () => {
        const l = this.responders.get(subject);
        if (l) l.splice(l.indexOf(entry), 1);
      },
    };
  }

  async publishEvent(subject: string, data: Uint8Array, msgId: string, headers?: Headers) {
    if (this.seen.has(msgId)) return; // the stream's duplicate window, as JetStream's Nats-Msg-Id
    this.seen.add(msgId);
    this.log.push({ seq: this.log.length + 1, subject, data, msgId, headers });
    for (const c of this.consumers) c.wake();
  }

  async consumeEvents(opts: ConsumeOptions, handler: (d: EventDelivery) => Promise<void>) {
    let cursor = 0;
    let stopped = false;
    let running = false;
    const redeliver: { item: Stored; count: number; at: number }[] = [];
    const timers = new Set<NodeJS.Timeout>();
    // Handed out and not yet acked or naked: a batching consumer acks after its handler has returned.
    let unsettled = 0;
    const deliver = async (item: Stored, count: number) => {
      this.deliveredTo.set(opts.durable, (this.deliveredTo.get(opts.durable) ?? 0) + 1);
      let settled = false;
      unsettled++;
      const finish = () => {
        unsettled--;
        this.done++;
        this.checkIdle();
      };
      await new Promise<void>((resolve) => {
        handler({
          data: item.data,
          subject: item.subject,
          headers: item.headers,
          redeliveryCount: count,
          ack: () => {
            if (settled) return;
            settled = true;
            resolve();
            finish();
          },
          nak: (delayMs = 0) => {
            if (settled) return;
            settled = true;
            const t = setTimeout(() => {
              timers.delete(t);
              redeliver.push({ item, count: count + 1, at: 0 });
              self.wake();
            }, delayMs);
            timers.add(t);
            resolve();
            finish();
          },
        }).then(
          () => {
            if (!settled) resolve();
          },
          () => {
            if (!settled) {
              settled = true;
              redeliver.push({ item, count: count + 1, at: 0 });
              resolve();
              finish();
            }
          },
        );
      });
    };
    const self = {
      wake: () => {
        if (running || stopped) return;
        running = true;
        queueMicrotask(async () => {
          try {
            while (!stopped) {
              const again = redeliver.shift();
              if (again) {
                await deliver(again.item, again.count);
                continue;
              }
              const next = this.log[cursor];
              if (!next) break;
              cursor++;
              if (subjectMatches(opts.filter, next.subject)) await deliver(next, 1);
            }
          } finally {
            running = false;
            this.checkIdle();
          }
        });
      },
      // A publish wakes every consumer at once (running), so one at rest has read to the end of the log.
      idle: () => !running && !unsettled && !redeliver.length && !timers.size,
    };
    this.consumers.add(self);
    self.wake();
    return {
      stop: async () => {
        stopped = true;
        this.consumers.delete(self);
        for (const t of timers) clearTimeout(t);
        this.checkIdle();
      },
    };
  }

  /**
   * Resolves when every consumer has been handed every event on the stream and has acked or naked each, with no
   * redelivery waiting (a nak's delay included): what p-queue calls `onIdle`. Checked as deliveries settle, not polled.
   */
  onIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.checkIdle();
    });
  }

  private checkIdle() {
    if (!this.idleWaiters.length || [...this.consumers].some((c) => !c.idle())) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  broadcast(subject: string, data: Uint8Array) {
    for (const [filter, set] of this.fanout) if (subjectMatches(filter, subject)) for (const h of set) h(data);
  }
  onBroadcast(subject: string, handler: (d: Uint8Array) => void) {
    const set = this.fanout.get(subject) ?? new Set();
    set.add(handler);
    this.fanout.set(subject, set);
    return { stop: () => set.delete(handler) };
  }
  isConnected() {
    return !this.closed;
  }
  async drain() {
    this.closed = true;
    this.responders.clear();
  }
}
