/**
 * At info, one log line per request (not one when it arrives and one when it ends): the request id,
 * method, route, status, duration and the replica that served it, and no other line for a plain call.
 * A bus call that times out is a warn line of its own in the caller's log (pillar, operation, request id), and a reply
 * that comes after its time-out one more, naming the replica that was slow.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { createInterface } from 'node:readline';
import {
  call,
  mintKey,
  serversFor,
  startDistributedHarness,
  startEmbeddedHarness,
  waitFor,
  type Harness,
} from './support/harness.ts';

describe('request log lines (embedded, LOG_LEVEL=info)', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  let h: Harness;
  beforeAll(async () => {
    h = await startEmbeddedHarness({ log: createLogger('test', 'info', sink) });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('writes exactly one line per request, naming request id, route, status, duration and served-by', async () => {
    const { key } = await mintKey(h.baseUrl);
    await new Promise((r) => setTimeout(r, 100));
    lines.length = 0;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await call(h.baseUrl, 'GET', '/signings/status?vin=1HGCM82633A004352', { key })).headers.get('x-request-id')!,
      );
    ids.push((await call(h.baseUrl, 'GET', '/no/such/route')).headers.get('x-request-id')!);
    await new Promise((r) => setTimeout(r, 100));
    expect(lines.map((l) => l.msg)).toEqual(ids.map(() => 'request'));
    expect(lines.map((l) => l.reqId)).toEqual(ids);
    expect(lines[0]).toMatchObject({
      level: 30,
      method: 'GET',
      route: 'signing.status',
      status: 200,
      ms: expect.any(Number),
      servedBy: expect.stringMatching(/^services-pillar@/),
    });
    expect(lines[5]).toMatchObject({ route: 'unmatched', status: 404 });
  });
});

describe.runIf(serversFor('bus time-out log suite'))("bus time-outs in the gateway's log (distributed)", () => {
  let h: Harness;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    h = await startDistributedHarness({ busTimeoutMs: 1000, env: { LOG_LEVEL: 'warn' } });
    createInterface({ input: h.procs!.get('gateway')![0]!.stdout! }).on('line', (l) => lines.push(JSON.parse(l)));
  }, 120_000);
  afterAll(async () => {
    for (const c of h?.procs?.get('data') ?? []) c.kill('SIGCONT');
    await h?.stop();
  });

  it('names the pillar, the operation and the request for every time-out, and the replica when its reply comes late', async () => {
    const data = h.procs!.get('data')![0]!;
    data.kill('SIGSTOP'); // subscribed but silent: NATS hands it the request, which times out
    const r = await call(h.baseUrl, 'GET', '/mcos/status?vin=1HGCM82633A004352');
    expect(r.status).toBe(503);
    const requestId = r.headers.get('x-request-id');
    const timedOut = { level: 40, pillar: 'data', operation: 'mco.status', requestId, timeoutMs: 1000 };
    // A read is sent twice (once more after a time-out), so it timed out twice.
    await waitFor(async () => lines.filter((l) => l.msg === 'bus call timed out').length === 2, 10_000);
    expect(lines.filter((l) => l.msg === 'bus call timed out')).toEqual([
      expect.objectContaining({ ...timedOut, retried: true }),
      expect.objectContaining({ ...timedOut, retried: false }),
    ]);
    data.kill('SIGCONT'); // it answers both now: too late, and each late reply names it
    await waitFor(async () => lines.filter((l) => l.msg === 'bus reply came after its time-out').length === 2, 20_000);
    for (const late of lines.filter((l) => l.msg === 'bus reply came after its time-out'))
      expect(late).toMatchObject({
        level: 40,
        pillar: 'data',
        operation: 'mco.status',
        requestId,
        replica: expect.stringMatching(new RegExp(`^data@[^/]+/[^/]+/${data.pid}$`)),
        afterMs: expect.any(Number),
      });
  }, 60_000);

  it('names the pillar and the operation when no replica is running at all', async () => {
    await h.kill!('data');
    const r = await call(h.baseUrl, 'GET', '/mcos/status?vin=1HGCM82633A004352');
    expect(r.status).toBe(503);
    await waitFor(async () => lines.some((l) => l.msg === 'bus call unanswered'), 10_000);
    expect(lines.filter((l) => l.msg === 'bus call unanswered')).toEqual([
      expect.objectContaining({
        level: 40,
        pillar: 'data',
        operation: 'mco.status',
        requestId: r.headers.get('x-request-id'),
        reason: 'no-responders',
      }),
    ]);
  }, 30_000);
});
