import pg from 'pg';
import { embeddedConfig, startEmbedded } from '@vcs/embedded';
import { ops, type OpInput, type OpKey } from '@vcs/contract';
import {
  callOp,
  createLogger,
  NatsBus,
  parseSettings,
  type Bus,
  type CallContext,
  type Clock,
  type Logger,
  type Queryable,
} from '@vcs/platform';
import { startRail, type Rail } from '@vcs/x402-rail';
import { startHarness, TEST_RATE_LIMITS, type Harness } from './harness.ts';

/** A harness plus a direct look at the store and the bus, to count events and call internal subjects. */
export interface MoneyHarness {
  h: Harness;
  db: Queryable;
  bus: Bus;
  stop(): Promise<void>;
}

/**
 * The real time moved on by what a test adds: the service's wall clock jumps ahead (an authorization's validBefore
 * passes, an offer's life runs out) without the test sleeping, and unlike a ManualClock everything that waits on it
 * still wakes on its own.
 */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now() {
    return new Date(Date.now() + this.offsetMs);
  }
  sleep(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, Math.max(0, ms)));
  }
  advance(ms: number) {
    this.offsetMs += ms;
  }
}

/**
 * `env`: settings for the service (the x402 rail's, say), in either mode. Embedded only: `clock` (the service's
 * time), `pgliteDir` (a directory on disk, so a second start on it sees what the first stored) and `log` (silent
 * unless given).
 */
export async function startMoneyHarness(
  mode: 'embedded' | 'distributed',
  env?: Record<string, string>,
  opts: { clock?: Clock; pgliteDir?: string; log?: Logger } = {},
): Promise<MoneyHarness> {
  if (mode === 'embedded') {
    const settings = env ? parseSettings(embeddedConfig, { ...process.env, ...env }) : undefined;
    const svc = await startEmbedded({
      pgliteDir: opts.pgliteDir ?? 'memory://',
      clock: opts.clock,
      log: opts.log ?? createLogger('test', 'silent'),
      rateLimits: TEST_RATE_LIMITS,
      settings,
    });
    const baseUrl = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const h: Harness = {
      mode,
      baseUrl,
      stop: () => svc.stop(),
      sql: async (text, params = []) => (await svc.infra.db.query(text, params)).rows,
      settled: () => svc.settled(),
    };
    return { h, db: svc.infra.db, bus: svc.infra.bus, stop: () => svc.stop() };
  }
  const h = await startHarness('distributed', { env });
  const pool = new pg.Pool({ connectionString: h.env!.DATABASE_URL, max: 2 });
  let bus: Bus;
  try {
    bus = await NatsBus.connect(h.env!.NATS_URL!, 'money-test', h.env!.NATS_NAMESPACE);
  } catch (e) {
    await pool.end();
    await h.stop();
    throw e;
  }
  const db: Queryable = {
    query: (sql, params) => pool.query(sql, params as any[]).then((r) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })),
  };
  return {
    h,
    db,
    bus,
    async stop() {
      await bus.drain();
      await pool.end();
      await h.stop();
    },
  };
}

/** Events of a type written for an account (the outbox is the record of what ran). */
export async function countEvents(db: Queryable, type: string, account: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'select count(*)::text as n from outbox_events where type = $1 and account_id = $2',
    [type, account],
  );
  return Number(rows[0]!.n);
}

/** Intent.settled@1 events written for one intent: it reached its end (once, when it did). */
export async function settledEventsOf(db: Queryable, intentId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `select count(*)::text as n from outbox_events where type = 'Intent.settled@1' and payload::text like $1`,
    [`%${intentId}%`],
  );
  return Number(rows[0]!.n);
}

/** Call a platform operation on the bus as a pillar would (the deal machine opens offers and handoffs this way). */
export async function ask<K extends OpKey>(bus: Bus, op: K, input: OpInput<K>, ctx: CallContext): Promise<any> {
  return callOp({ bus, busTimeoutMs: 4000 }, ops[op], input as never, ctx);
}

/** The service's settings that point it at an x402 rail (`startRail`), for `startMoneyHarness(mode, env)`. */
export const railSettings = (rail: Rail): Record<string, string> => ({
  X402_FACILITATOR_URL: rail.facilitatorUrl,
  X402_RPC_URL: rail.rpcUrl,
  X402_PAY_TO: rail.payTo,
  X402_ASSET: rail.asset,
  X402_NETWORK: rail.network,
});

export const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A service taking payments on a local rail of its own (`payers` funded wallets), in either mode. */
export async function startPaidService(
  mode: 'embedded' | 'distributed',
  payers: number,
  env: Record<string, string> = {},
): Promise<{ rail: Rail; m: MoneyHarness; base: string }> {
  const rail = await startRail({ payers });
  try {
    const m = await startMoneyHarness(mode, { ...railSettings(rail), ...env });
    return { rail, m, base: m.h.baseUrl };
  } catch (e) {
    await rail.stop();
    throw e;
  }
}

/** Stop what startPaidService started (either may be missing when a start failed). */
export async function stopPaidService(s: { rail?: Rail; m?: MoneyHarness }): Promise<void> {
  await s.m?.stop();
  await s.rail?.stop();
}
