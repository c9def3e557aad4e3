import {
  BusError,
  type Bus,
  type BusMessage,
  type ConsumeOptions,
  type EventDelivery,
  type Headers,
  type Responder,
} from './types.ts';

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
export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private responders = new Map<string, { queue: string; fn: Responder }[]>();
  private rr = new Map<string, number>();
  private log: Stored[] = [];
  private seen = new Set<string>();
  private consumers = new Set<{ wake(): void }>();
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
    const deliver = async (item: Stored, count: number) => {
      let settled = false;
      await new Promise<void>((resolve) => {
        handler({
          data: item.data,
          subject: item.subject,
          headers: item.headers,
          redeliveryCount: count,
          ack: () => {
            settled = true;
            resolve();
          },
          nak: (delayMs = 0) => {
            settled = true;
            const t = setTimeout(() => {
              timers.delete(t);
              redeliver.push({ item, count: count + 1, at: 0 });
              self.wake();
            }, delayMs);
            timers.add(t);
            resolve();
          },
        }).then(
          () => {
            if (!settled) resolve();
          },
          () => {
            if (!settled) {
              redeliver.push({ item, count: count + 1, at: 0 });
              resolve();
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
          }
        });
      },
    };
    this.consumers.add(self);
    self.wake();
    return {
      stop: async () => {
        stopped = true;
        this.consumers.delete(self);
        for (const t of timers) clearTimeout(t);
      },
    };
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
