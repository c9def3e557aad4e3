/**
 * Every bench script runs a few requests here (`pnpm bench` itself in test/bench.run.smoke.test.ts, beside this
 * file), so none can rot between the sittings that measure with them.
 * No figure is asserted (timing goals live in the scripts' printed tables): only that each script finishes,
 * prints its rows and that what it counts is whole (every webhook delivered and verified).
 * BENCH_SMOKE=1 (test/bench/support.ts): every server, path and row, but a run is a few requests and a settling or
 * idle window 100 ms; BENCH_SKIP_BUILD=1: dist/ was built for this run by the global set-up (test/support/build.ts).
 */
import { describe, expect, it } from 'vitest';
import { runScript } from './support/bench-script.ts';

/** A printed row: its name, then figures that are all numbers. */
const expectFigures = (row: string[]) =>
  expect(
    row.slice(1).every((n) => Number.isFinite(Number(n))),
    row.join(' '),
  ).toBe(true);

describe('bench scripts (smoke: a few requests each)', () => {
  it('pnpm bench:webhooks settles its offers and every delivery arrives signed', async () => {
    const r = await runScript('test/bench/webhooks.ts', {
      BENCH_EVENTS_1: '3',
      BENCH_EVENTS_100: '1',
      BENCH_PACED_SECONDS: '0.1',
      BENCH_ENDPOINTS: '10', // 100 in a sitting: registering them is most of a smoke run
    });
    expect(r.code, r.err).toBe(0);
    const runs = r.out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(runs.map((x) => [x.endpoints, x.mode])).toEqual([
      [1, 'burst'],
      [10, 'burst'],
      [10, 'paced at 200 deliveries/s'],
    ]);
    for (const x of runs) {
      expect(x.deliveries).toBe(x.expected);
      expect(x.signatureFailures).toBe(0);
    }
  }, 180_000);

  it('pnpm bench:tracing measures the bus call and the outbox row with tracing off and on', async () => {
    const r = await runScript('test/bench/tracing.ts', { BENCH_TRACING_N: '500', BENCH_TRACING_ROUNDS: '1' });
    expect(r.code, r.err).toBe(0);
    const rows = r.out
      .split('\n')
      .filter((l) => /^(off|on) /.test(l))
      .map((l) => l.split(/\s+/));
    expect(rows.map((x) => x[0])).toEqual(['off', 'on']);
    for (const x of rows) expectFigures(x);
  }, 120_000);

  it('pnpm bench:wakeups prints the CPU of each hop, back to back and after idleness', async () => {
    const r = await runScript('test/bench/wakeups.ts', { BENCH_WAKEUPS: '50' });
    expect(r.code, r.err).toBe(0);
    const hops = r.out
      .split('\n')
      .filter((l) => l.startsWith('a '))
      .map((l) => l.split('\t'));
    // The Postgres and NATS hops are measured when their servers are set (as in CI), and skipped otherwise.
    const servers = [
      process.env.DATABASE_URL && 'a Postgres statement',
      process.env.NATS_URL && 'a NATS request-reply',
    ];
    expect(hops.map((h) => h[0]!.split(' (')[0])).toEqual(
      ['a message to a worker thread and back', ...servers].filter(Boolean),
    );
    for (const h of hops) expectFigures(h);
  }, 60_000);

  it('pnpm bench:decode decodes every VIN it is given and prints its figures', async () => {
    const r = await runScript('test/bench/decode.ts', { BENCH_SEEN_ROUNDS: '2' });
    expect(r.code, r.err).toBe(0);
    const figures = JSON.parse(r.out.split('\n').find((l) => l.startsWith('{'))!);
    expect(figures).toMatchObject({
      unseenP50Ms: expect.any(Number),
      unseenP99Ms: expect.any(Number),
      seenP99Ms: expect.any(Number),
      rssAfterMb: expect.any(Number),
    });
    expect(figures.vins).toBeGreaterThan(20);
  }, 120_000);

  // Each of the callers' clients: fetch, a stock client's and the default, and undici's lighter `request`.
  it.each([
    ['fetch', 'fetch'],
    ['undici', "undici's request"],
  ])(
    'pnpm bench:x402 pays every call it sends, ours and the reference seller, and prints the ratios (callers through %s)',
    async (client, named) => {
      // One second a leg at c=10 after the warm-up, embedded only (the distributed row is the same code as pnpm bench's).
      const r = await runScript('test/bench/x402.ts', {
        BENCH_X402_SECONDS: '1',
        BENCH_X402_PAYERS: '3',
        BENCH_X402_CONCURRENCY: '10',
        BENCH_X402_ONLY: 'reference,embedded',
        BENCH_X402_CLIENT: client,
      });
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain(`callers through ${named}`);
      const rows = r.out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      expect(rows.map((x) => [x.seller, x.leg]).sort()).toEqual([
        ['ours: embedded', '402'],
        ['ours: embedded', 'paid'],
        ['reference: @x402/core resource server', '402'],
        ['reference: @x402/core resource server', 'paid'],
      ]);
      for (const x of rows) {
        expect(x.errors, `${x.seller} ${x.leg}: ${JSON.stringify(x.failures)}\n${r.err.slice(-4000)}`).toBe(0);
        expect(x.calls).toBeGreaterThan(0);
      }
      expect(r.out).toMatch(
        /^ours: embedded\tc=10\tcalls\/s [\d.]+× \((met|NOT met)\)\tp99 [\d.]+× \((met|NOT met)\)$/m,
      );
      // The 402 leg's CPU is read over that leg alone: a figure, never the paid leg's NaN.
      for (const x of rows.filter((row) => row.leg === '402')) expect(Number.isFinite(x.sellerUs)).toBe(true);
      // Each paid call writes at least its HTTP answer: a seller counted with no writes was not counted.
      for (const x of rows.filter((row) => row.leg === 'paid'))
        expect(x.writesByPart.process).toBeGreaterThanOrEqual(1);
      expect(r.out).toMatch(/^ours: embedded\tc=10\t[\d.]+ in all: process [\d.]+$/m);
    },
    240_000,
  );

  it('test/bench/x402-statements.ts pays and counts the statements of each leg', async () => {
    const r = await runScript('test/bench/x402-statements.ts', { BENCH_STATEMENTS_CALLS: '2' });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /^statements per paid call: 402 leg [\d.]+, paid leg [\d.]+, after the answer [\d.]+; in all/m,
    );
  }, 240_000);
});
