import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKv, ManualClock, type Kv } from '@vcs/platform';
import { LeasedLimiter, RateLimiterRes, redisWindow } from '../services/gateway/src/rateLimit.ts';
import { serversFor } from './support/harness.ts';

const REDIS_URL = process.env.REDIS_URL;

/** Two "gateways" (two LeasedLimiters) sharing one Redis window, counting the Redis operations they make. */
describe.runIf(serversFor('rate-lease suite', ['REDIS_URL']))(
  'leased rate limits on real Redis (needs REDIS_URL)',
  () => {
    let kv: Kv;
    beforeAll(async () => {
      kv = createRedisKv(REDIS_URL!, '');
      if (kv.redis!.status !== 'ready') await new Promise((r) => kv.redis!.once('ready', r));
    });
    afterAll(async () => {
      await kv.close();
    });

    function gateways(points: number, clock?: ManualClock) {
      const shared = redisWindow(kv.redis!, `test:rl:${randomBytes(6).toString('hex')}`, points);
      let redisOps = 0;
      const counting = {
        consume: (id: string, n: number) => {
          redisOps++;
          return shared.consume(id, n);
        },
      } as unknown as typeof shared;
      return { a: new LeasedLimiter(counting, clock), b: new LeasedLimiter(counting, clock), ops: () => redisOps };
    }
    async function take(l: LeasedLimiter, id: string) {
      try {
        return { ok: true, res: await l.consume(id) };
      } catch (e) {
        if (e instanceof RateLimiterRes) return { ok: false, res: e };
        throw e;
      }
    }

    it("refused, stays refused without asking Redis until the gateway's clock passes the window's reset", async () => {
      const clock = new ManualClock();
      const { a, ops } = gateways(1, clock);
      expect((await take(a, 'caller')).ok).toBe(true);
      expect((await take(a, 'caller')).ok).toBe(false);
      const asked = ops();
      expect((await take(a, 'caller')).ok).toBe(false);
      expect(ops()).toBe(asked); // the refusal is remembered, not asked again
      clock.advance(61_000); // past the one-minute window as the gateway sees it: the next call asks Redis again
      await take(a, 'caller');
      expect(ops()).toBe(asked + 1);
    });

    it('is exact near the limit: 8 calls a minute across two gateways admit exactly 8, remaining counts down', async () => {
      const { a, b } = gateways(8);
      const seen: { ok: boolean; remaining: number }[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await take(i % 2 ? b : a, 'caller');
        seen.push({ ok: r.ok, remaining: r.res.remainingPoints });
      }
      expect(seen.filter((s) => s.ok).length).toBe(8);
      expect(seen.slice(0, 8).map((s) => s.remaining)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
      expect(seen.slice(8).every((s) => !s.ok)).toBe(true);
    });

    it('far from the limit, serves most calls without Redis, and never admits more than the limit', async () => {
      const { a, b, ops } = gateways(2000);
      let admitted = 0;
      for (let i = 0; i < 1000; i++) if ((await take(i % 2 ? b : a, 'caller')).ok) admitted++;
      expect(admitted).toBe(1000);
      expect(ops()).toBeLessThan(100); // leases of up to 100 tokens, not one round trip per call
      for (let i = 0; i < 1500; i++) if ((await take(i % 2 ? b : a, 'caller')).ok) admitted++;
      expect(admitted).toBeLessThanOrEqual(2000);
      expect(admitted).toBeGreaterThanOrEqual(1800); // an unspent lease is lost to the window: at most a tenth
    });

    it('concurrent calls on one gateway share one lease request instead of each asking Redis', async () => {
      const { a, ops } = gateways(100_000);
      await take(a, 'burst'); // learns what remains
      const before = ops();
      const results = await Promise.all(Array.from({ length: 50 }, () => take(a, 'burst')));
      expect(results.every((r) => r.ok)).toBe(true);
      expect(ops() - before).toBe(1);
    });

    it('once refused, refuses locally until the window resets', async () => {
      const { a, ops } = gateways(2);
      await take(a, 'x');
      await take(a, 'x');
      const refused = await take(a, 'x');
      expect(refused.ok).toBe(false);
      expect(refused.res.msBeforeNext).toBeGreaterThan(0);
      const before = ops();
      for (let i = 0; i < 20; i++) expect((await take(a, 'x')).ok).toBe(false);
      expect(ops()).toBe(before);
    });
  },
);
