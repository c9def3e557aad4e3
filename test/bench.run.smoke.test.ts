/**
 * `pnpm bench` (test/bench/run.ts) in smoke mode, a file of its own: it starts every server of its rows (ours, the
 * peer, the reference, the write anchors, the ceiling) and the README's start twice, the longest of the bench scripts,
 * so it runs beside the others (test/bench.smoke.test.ts) instead of after them. No figure is asserted: only that
 * it finishes and prints a row for every server and target.
 */
import { describe, expect, it } from 'vitest';
import { runScript } from './support/bench-script.ts';

describe('pnpm bench (smoke: a few requests a row)', () => {
  it('pnpm bench prints a row for every server and target it starts', async () => {
    // One short round; the embedded and ceiling rows run everywhere, the distributed ones where the servers are set.
    const r = await runScript('test/bench/run.ts', { BENCH_SECONDS: '1', BENCH_REPEATS: '1' });
    expect(r.code, r.err).toBe(0);
    const table = r.out.slice(r.out.indexOf('server\ttarget'));
    expect(table).toMatch(/^embedded\tfree GET \/signings\/status\t50\t\d+/m);
    expect(table).toMatch(/^embedded\tkeyed POST \/total-loss\/acv\t50\t\d+/m);
    expect(table).toMatch(/^embedded\tfree GET \/decode\/\{vin\}\t50\t\d+/m);
    for (const anchor of ['W0', 'E0'])
      if (anchor === 'E0' || process.env.NATS_URL)
        expect(table).toMatch(new RegExp(`^${anchor} [^\t]+\tkeyed POST`, 'm'));
    expect(table).toMatch(/^ceiling/m);
    // The README's start, measured beside the servers' start in smoke mode: a first start and a restart.
    for (const start of ['first', 'restart'])
      expect(r.out).toMatch(new RegExp(`^${start}\\t\\d+\\t[\\d.]+\\t\\d+\\t\\d+`, 'm'));
    if (process.env.NATS_URL) expect(table).toMatch(/^distributed\tkeyed POST \/total-loss\/acv\t50\t\d+/m);
  }, 300_000);
});
