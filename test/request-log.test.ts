/**
 * At info, one log line per request (not one when it arrives and one when it ends): the request id,
 * method, route, status, duration and the replica that served it, and no other line for a plain call.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { call, mintKey, startEmbeddedHarness, type Harness } from './support/harness.ts';

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
