import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { consumerWatch, eventFlow, eventFlowProblems, readiness } from '../metrics.ts';
import type { Bus } from '../bus/types.ts';
import type { Db } from '../store/db.ts';
import { OutboxRelay } from './outbox.ts';
import { retryablePublishError } from '../bus/nats.ts';

/** A log that keeps its lines (pino writes one JSON object per line). */
function capture() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const log = createLogger('test', 'info', {
    write(s: string) {
      lines.push(JSON.parse(s));
      return true;
    },
  } as never);
  return { log, lines };
}

describe('event flow: what /readyz and the logs say', () => {
  it('a consumer stalled, or publishing failing, longer than the allowance makes the process not ready', async () => {
    const infra = {
      bus: { isConnected: () => true },
      db: { ping: async () => true } as unknown as Db,
      kv: { ping: async () => true },
    };
    expect(await readiness(infra, 1000)).toMatchObject({ ready: true, failed: [] });
    const w = consumerWatch('flow-test', async () => 0);
    try {
      w.stalled(true);
      expect(eventFlowProblems(1000)).toEqual([]); // within the allowance: an election takes seconds
      expect(eventFlowProblems(1000, Date.now() + 1001)).toEqual(['consume']);
      eventFlow.publishFailingSince = Date.now() - 5000;
      expect(await readiness(infra, 1000)).toMatchObject({ ready: false, failed: ['events-publish'] });
      w.stalled(false);
      eventFlow.publishFailingSince = 0;
      expect(await readiness(infra, 1000)).toMatchObject({ ready: true });
    } finally {
      w.remove();
      eventFlow.publishFailingSince = 0;
    }
  });

  it('the relay says once that it paused (with the reason) and once that it resumed, however many ticks fail between', async () => {
    const { log, lines } = capture();
    let rows = [{ seq: '1', id: 'evt_1', subject: 'evt.Test.x', payload: '{}' }];
    const db = {
      query: async (sql: string) => ({
        rows: /^select seq/.test(sql.trim())
          ? rows
          : /^update/.test(sql.trim())
            ? ((rows = []), [])
            : rows.length
              ? [{}]
              : [],
        rowCount: 0,
      }),
    } as unknown as Db;
    let down = true;
    const bus = {
      publishEvent: async () => {
        if (down) throw new Error('503 no responders');
      },
    } as unknown as Bus;
    const relay = new OutboxRelay(db, bus, log, 1_000_000, true);
    const settle = () => new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 3; i++) {
      relay.kick();
      await settle();
    }
    expect(lines.map((l) => [l.level, l.msg.split(':')[0]])).toEqual([[40, 'outbox relay paused']]);
    expect(lines[0]!.reason).toBe('503 no responders');
    expect(eventFlow.publishFailingSince).toBeGreaterThan(0);
    down = false;
    relay.kick();
    await settle();
    expect(lines.map((l) => l.msg.split(':')[0])).toEqual(['outbox relay paused', 'outbox relay resumed']);
    expect(lines[1]).toMatchObject({ level: 30, relayed: 1 });
    expect(eventFlow.publishFailingSince).toBe(0);
  });

  it('publishes are retried after a no-responders, a time-out or a 503, and not after a closed connection or a refusal', () => {
    for (const e of [
      Object.assign(new Error('no responders'), { name: 'NoRespondersError' }),
      Object.assign(new Error('timeout'), { name: 'TimeoutError' }),
      new Error('JetStream system temporarily unavailable'),
    ])
      expect(retryablePublishError(e), e.message).toBe(true);
    for (const e of [
      Object.assign(new Error('closed'), { name: 'ClosedConnectionError' }),
      new Error('maximum messages exceeded'),
      new Error('wrong last sequence: 4'),
    ])
      expect(retryablePublishError(e), e.message).toBe(false);
  });
});
