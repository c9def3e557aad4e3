/**
 * The connection budget (docs/operations.md, "Connections: PgBouncer"): the distributed mode, every pillar at two
 * replicas whose pools together ask for more connections than Postgres allows, serves keyed writes and reads without an
 * error through Debian's PgBouncer in transaction pooling, as deploy/ runs it; and the same fleet straight against that
 * Postgres fails, so the pooler is what makes the difference. Private Postgres and PgBouncer servers (initdb on their
 * own ports); the shared NATS and Redis, namespaced per run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { PILLAR_SERVICES } from '../deploy/launch.ts';
import { call, mintKey, paid, serversFor, startDistributedHarness, type Harness } from './support/harness.ts';
import {
  pgbouncerBin,
  postgresBin,
  privatePgbouncer,
  privatePostgres,
  type PrivateServer,
} from './support/private-infra.ts';

const tools = postgresBin() !== null && pgbouncerBin() !== null;
if (!tools && process.env.CI)
  throw new Error('CI must run the PgBouncer suite: apt-get install -y pgbouncer (.ci/run does), and Postgres');
if (!tools)
  console.warn('PgBouncer suite skipped: it needs Debian’s pgbouncer (apt-get install -y pgbouncer) and Postgres');
const runs = tools && serversFor('PgBouncer suite', ['NATS_URL', 'REDIS_URL']);

/** Postgres's own limit, below what the fleet's pools ask for in all. */
const MAX_CONNECTIONS = 30;
/** Per process; 2 replicas of each of the 4 pillars and 1 gateway: 9 × 7 = 63 connections asked. */
const PG_POOL_MAX = 7;
const REPLICAS = Object.fromEntries(PILLAR_SERVICES.map((p) => [p, 2]));
/** PgBouncer's server connections, below MAX_CONNECTIONS (docs/operations.md: the pool against max_connections). */
const POOL_SIZE = 20;
const LOAD_MS = 5_000;
const CONCURRENCY = 48;
const TOO_MANY = /too many clients/i;
const VIN = '1HGCM82633A004352';

interface Outcome {
  /** Answers that are not 200, by status and code (`503 store-unavailable`). */
  errors: Map<string, number>;
  /** The first message of each, so a failure says why. */
  why: Map<string, string>;
  answered: number;
  /** Lines saying "too many clients": the processes' logs, Postgres's and PgBouncer's. */
  tooMany: string[];
  /** The most connections Postgres held at once, sampled. */
  peakServerConnections: number;
}

/** The fleet on `databaseUrl` under keyed writes and reads from CONCURRENCY callers for LOAD_MS. */
async function underLoad(databaseUrl: string, postgres: PrivateServer, logs: PrivateServer[]): Promise<Outcome> {
  const started = Date.now();
  const h: Harness = await startDistributedHarness({
    replicas: REPLICAS,
    // A bus call waits longer than deploy/'s 3 s: the machine running this suite runs others beside it, and a call
    // queued behind them is not what this suite is about (a pool's wait for a connection is 2 s at most either way).
    busTimeoutMs: 10_000,
    env: { DATABASE_URL: databaseUrl, PG_POOL_MAX: String(PG_POOL_MAX), LOG_LEVEL: 'warn' },
  });
  const out: string[] = [];
  for (const c of [...h.procs!.values()].flat()) {
    c.stdout?.on('data', (d) => out.push(String(d)));
    c.stderr?.on('data', (d) => out.push(String(d)));
  }
  const errors = new Map<string, number>();
  const why = new Map<string, string>();
  let answered = 0;
  let peak = 0;
  try {
    console.info(`pgbouncer suite: ${databaseUrl}: the fleet ready in ${Date.now() - started} ms`);
    const { key } = await mintKey(h.baseUrl);
    // Writes on every pillar that keeps rows (services: an event; commerce: the offer's intent and a key; workflows:
    // a deal) and reads (a free one, a keyed one on data).
    const calls = [
      () => paid(h.baseUrl, '/webhooks/emit', key, { vin: VIN }),
      () => call(h.baseUrl, 'POST', '/deals/open', { key, body: { workflow: 'buy', vin: VIN } }),
      () => call(h.baseUrl, 'POST', '/keys'),
      () => call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`),
      () => call(h.baseUrl, 'GET', `/vehicles/decode?vin=${VIN}`, { key }),
    ];
    const until = Date.now() + LOAD_MS;
    const sampler = setInterval(() => {
      void countConnections(postgres).then(
        (n) => (peak = Math.max(peak, n)),
        () => undefined,
      );
    }, 250);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let i = w; Date.now() < until; i++) {
          const r = await calls[i % calls.length]!().catch((e: Error) => ({
            status: 0,
            json: { value: { code: e.message } },
          }));
          answered++;
          if (r.status !== 200) {
            const what = `${r.status} ${(r.json as { value?: { code?: string } } | null)?.value?.code ?? ''}`.trim();
            errors.set(what, (errors.get(what) ?? 0) + 1);
            if (!why.has(what)) why.set(what, JSON.stringify(r.json).slice(0, 300));
          }
        }
      }),
    );
    clearInterval(sampler);
  } finally {
    await h.stop();
  }
  const lines = [...out.join('').split('\n'), ...logs.flatMap((s) => readFileSync(s.logFile!, 'utf8').split('\n'))];
  return { errors, why, answered, tooMany: lines.filter((l) => TOO_MANY.test(l)), peakServerConnections: peak };
}

/** Client backends connected to Postgres now, asked over a connection of its own (a superuser's reserved slot). */
async function countConnections(postgres: PrivateServer): Promise<number> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: postgres.url });
  await c.connect();
  try {
    const r = await c.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return r.rows[0]!.n;
  } finally {
    await c.end();
  }
}

describe.runIf(runs)(
  `the distributed mode at 2 replicas a pillar (${9 * PG_POOL_MAX} connections asked, max_connections ${MAX_CONNECTIONS})`,
  () => {
    const servers: PrivateServer[] = [];
    afterAll(async () => {
      for (const s of servers.reverse()) await s.destroy();
    });

    it('through PgBouncer (transaction pooling) answers every call, and nothing says "too many clients"; straight to Postgres it fails', async () => {
      const postgres = await privatePostgres({ maxConnections: MAX_CONNECTIONS });
      servers.push(postgres);
      const bouncer = await privatePgbouncer(postgres, { poolSize: POOL_SIZE, maxClients: 200 });
      servers.push(bouncer);

      const pooled = await underLoad(bouncer.url, postgres, [postgres, bouncer]);
      expect(pooled.answered).toBeGreaterThanOrEqual(CONCURRENCY);
      expect(
        Object.fromEntries(pooled.errors),
        `error answers through PgBouncer: ${JSON.stringify(Object.fromEntries(pooled.why))}`,
      ).toEqual({});
      expect(pooled.tooMany, 'too many clients through PgBouncer').toEqual([]);
      // PgBouncer held Postgres to its pool (and the sampler's own connection).
      expect(pooled.peakServerConnections).toBeLessThanOrEqual(POOL_SIZE + 1);

      // PgBouncer goes first: its idle server connections would otherwise hold Postgres's slots.
      await bouncer.destroy();
      servers.splice(servers.indexOf(bouncer), 1);
      const direct = await underLoad(postgres.url, postgres, [postgres]);
      console.info(
        `pgbouncer suite: through PgBouncer ${pooled.answered} answers, 0 errors, peak ${pooled.peakServerConnections} ` +
          `server connections; straight to Postgres ${direct.answered} answers, errors ` +
          `${JSON.stringify(Object.fromEntries(direct.errors))}, ${direct.tooMany.length} "too many clients" lines`,
      );
      expect(direct.tooMany.length, 'straight to Postgres, the fleet runs it out of connections').toBeGreaterThan(0);
      expect(direct.errors.get('503 store-unavailable') ?? 0).toBeGreaterThan(0);
    }, 180_000);
  },
);
