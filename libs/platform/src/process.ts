import { createServer, type Server } from 'node:http';
import type { Pillar } from '@vcs/contract';
import { NatsBus } from './bus/nats.ts';
import type { Bus } from './bus/types.ts';
import { systemClock, type Clock } from './clock.ts';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  baseConfig,
  ConfigError,
  listenHost,
  loadConfig,
  parseSettings,
  redactUrl,
  requireDistributed,
  runMain,
  setting,
  urlOf,
  type BaseConfig,
} from './config.ts';
import { OutboxRelay } from './events/outbox.ts';
import type { Services } from './handler.ts';
import { createLogger, type Logger } from './logger.ts';
import { metricsRegistry, readiness, watchOutbox } from './metrics.ts';
import { servePillar, type PillarHandlers } from './runner.ts';
import { serveOps, type OpsImpl } from './bus/serve.ts';
import {
  createPgDb,
  migrate,
  platformMigrations,
  StoreUnavailableError,
  type Db,
  type Migrations,
} from './store/db.ts';
import { createRedisKv, type Kv } from './store/kv.ts';
import { startTracing, stopTracing } from './tracing.ts';

/**
 * How this process runs, said once where its infrastructure is made, never guessed from it: `embedded` (one process,
 * in-process bus, PGlite) or `distributed` (NATS, Postgres, Redis).
 */
export type RunMode = 'embedded' | 'distributed';
export interface Infra {
  bus: Bus;
  db: Db;
  kv: Kv;
  clock: Clock;
  mode: RunMode;
}
export interface Stoppable {
  stop(): Promise<void> | void;
}

/** The settings a pillar's code reads: the base ones and those of its own schema (`settings` of its definition). */
export type SettingsOf<Own extends z.ZodObject> = BaseConfig & z.infer<Own>;

/**
 * A pillar service: its handlers and platform operations (both typed from the contract), any background work it owns,
 * and the schema of its own settings, which types what its code reads (`services.settings`: SettingsOf<Own>).
 */
export interface PillarDefinition<P extends Pillar = Pillar, Own extends z.ZodObject = z.ZodObject<{}>> {
  pillar: P;
  name: string;
  version: string;
  handlers: PillarHandlers<P, SettingsOf<Own>>;
  /** Its platform operations (contract ops.ts), served with the capabilities. */
  ops?: (services: Services<SettingsOf<Own>>) => OpsImpl<P>;
  /** Background work beside request-reply (event consumers, workers); started after the handlers. */
  background?: (services: Services<SettingsOf<Own>>) => Promise<Stoppable[]>;
  /**
   * The settings it reads beyond the base ones (`z.object({})`: none), parsed once at start into `services.settings`
   * with the base ones; every process that runs it parses them (README's table lists them all).
   */
  settings: Own;
  /** Its own tables: the folder of its migrations (`<pillar>/migrations`). */
  migrations?: Migrations;
}

/** The `settings` of a pillar that reads none beyond the base ones. */
export const noOwnSettings = z.object({});

/** A pillar's migrations folder, beside its `src/`: `ownMigrations('commerce', import.meta.url)`. */
export const ownMigrations = (owner: string, moduleUrl: string): Migrations => ({
  owner,
  dir: fileURLToPath(new URL('../migrations', moduleUrl)),
});

/** Any one pillar's definition (each typed for its own pillar and settings; here its settings' type is left open). */
export type AnyPillarDefinition = { [P in Pillar]: PillarDefinition<P, any> }[Pillar];

/** A started pillar: stop it; its background work is there for whoever waits on it (the embedded mode's settled()). */
export interface StartedPillar extends Stoppable {
  background: Stoppable[];
}

/**
 * Start a pillar on given infrastructure: serve its capabilities and operations, relay its outbox, start its background
 * work.
 */
export async function startPillar(
  def: AnyPillarDefinition,
  infra: Infra,
  log: Logger,
  shared: { relay?: OutboxRelay; settings?: BaseConfig } = {},
): Promise<StartedPillar> {
  // Passed in, they were parsed with a schema that extends this pillar's (its process's, or the embedded one, which
  // extends every pillar's). Started on its own (a test, a tool), a pillar parses its settings here, from the
  // environment.
  const settings = shared.settings ?? parseSettings(withBase(baseConfig, def));
  const services: Services = { ...infra, log, source: `${def.name}@${def.version}`, settings };
  // Pillars in one process share one store, so they share one relay (the embedded mode passes it). Every event
  // written in the process wakes it (events/outbox.ts `eventWrites`).
  const ownRelay = shared.relay ? undefined : new OutboxRelay(infra.db, infra.bus, log).start();
  // Each definition was type-checked against its own pillar's nouns and ops (PillarDefinition<P>).
  const served = servePillar(def.pillar as Pillar, def.handlers as never, services);
  const servedOps = def.ops ? serveOps(services, def.pillar as Pillar, def.ops(services as never) as never) : undefined;
  const background = (await def.background?.(services)) ?? [];
  return {
    background,
    async stop() {
      served.stop();
      servedOps?.stop();
      for (const b of background) await b.stop();
      await ownRelay?.stop();
    },
  };
}

/**
 * Postgres's refusals that no wait or restart mends, because DATABASE_URL names what is not there: a database that
 * does not exist (3D000), a password it refuses (28P01), a role or host it does not admit (28000). Each is a wrong
 * setting (exit 78), so start:distributed stops at once instead of restarting every service into the same refusal.
 */
const SETTING_REFUSALS = new Set(['3D000', '28P01', '28000']);

/**
 * Connect to NATS, Postgres and Redis (distributed mode), migrating the schema. Servers still starting are waited
 * for up to STARTUP_TIMEOUT_MS; a server that refuses for good fails at once (a refusal DATABASE_URL causes: exit 78).
 * Either way the error names the server and what to check.
 */
export async function connectInfra(name: string, cfg: BaseConfig, own: Migrations[], log?: Logger): Promise<Infra> {
  const urls = requireDistributed(cfg);
  const db = createPgDb(urls.databaseUrl, cfg.PG_POOL_MAX, log, name);
  const until = Date.now() + cfg.STARTUP_TIMEOUT_MS;
  for (;;) {
    try {
      await migrate(db, [platformMigrations, ...own]);
      break;
    } catch (e) {
      const unreachable = e instanceof StoreUnavailableError;
      if (!unreachable || Date.now() > until) {
        await db.close().catch(() => undefined);
        if (SETTING_REFUSALS.has((e as { code?: string }).code ?? ''))
          throw new ConfigError(
            `config error: DATABASE_URL: Postgres at ${redactUrl(urls.databaseUrl)} refuses it: ${(e as Error).message}` +
              ` (${(e as { code?: string }).code === '3D000' ? 'create that database, or ' : ''}correct DATABASE_URL)`,
          );
        throw new Error(
          `Postgres at ${redactUrl(urls.databaseUrl)}: ${(e as Error).message}` +
            `${unreachable ? ` (waited ${cfg.STARTUP_TIMEOUT_MS / 1000} s: STARTUP_TIMEOUT_MS)` : ''}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const bus = await NatsBus.connect(urls.natsUrl, name, cfg.NATS_NAMESPACE, cfg.STARTUP_TIMEOUT_MS, {
    replicas: cfg.EVENT_STREAM_REPLICAS,
    log,
  });
  const kv = createRedisKv(urls.redisUrl, cfg.REDIS_PREFIX, log);
  // Serve only once Redis answers: with no offline queue, a command sent while it is still connecting fails (an
  // operator once saw the first request's rate-limit check log ioredis's 'Stream isn't writeable' stack).
  while (!(await kv.ping())) {
    if (Date.now() > until) {
      kv.close().catch(() => undefined);
      throw new Error(
        `Redis at ${redactUrl(urls.redisUrl)} did not answer within ${cfg.STARTUP_TIMEOUT_MS / 1000} s ` +
          '(STARTUP_TIMEOUT_MS): is it running, and is REDIS_URL right?',
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { bus, db, kv, clock: systemClock, mode: 'distributed' };
}

/** Where a health server listens, and the setting that says so (named when the port cannot be had). */
export interface HealthAddress {
  setting: 'HEALTH_PORT' | 'METRICS_PORT';
  port: number;
  host: string;
}

/**
 * /healthz (alive), /readyz (bus, store and Redis reachable; 503 naming what failed) and /metrics
 * (Prometheus) for a pillar process, which has no HTTP server of its own (and the gateway's METRICS_PORT). A port
 * another process holds is one warn line naming it and its setting, and the process serves on without them: health
 * is for watching a replica, never a reason to stop one.
 */
export function healthServer(
  infra: Infra,
  at: HealthAddress,
  log: Pick<Logger, 'warn'>,
  eventStallMs = 30_000,
): Server {
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    try {
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"alive"}');
        return;
      }
      if (path === '/readyz') {
        const r = await readiness(infra, eventStallMs);
        res.writeHead(r.ready ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: r.ready ? 'ready' : 'not-ready', checks: r.checks, failed: r.failed }));
        return;
      }
      if (path === '/metrics') {
        const body = await metricsRegistry.metrics();
        res.writeHead(200, { 'content-type': metricsRegistry.contentType });
        res.end(body);
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"type":"BLOCKED","value":{"code":"not-found","message":"GET /healthz, /readyz or /metrics"}}');
    } catch {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"type":"BLOCKED","value":{"code":"store-unavailable","message":"a check failed"}}');
    }
  });
  server.on('error', (e: NodeJS.ErrnoException) =>
    log.warn(
      { pid: process.pid, [at.setting]: at.port, code: e.code },
      e.code === 'EADDRINUSE'
        ? `${at.host}:${at.port} (${at.setting}) is in use by another process: this process serves without ` +
            '/healthz, /readyz and /metrics; set a free port'
        : `cannot serve /healthz, /readyz and /metrics on ${at.host}:${at.port} (${at.setting}): ${e.message}`,
    ),
  );
  server.listen(at.port, at.host);
  return server;
}

/**
 * Install SIGTERM/SIGINT handling: run `shutdown` once, under a hard time-out, then exit.
 * Order is the caller's: stop accepting, finish in-flight, drain NATS, close pools.
 */
export function onShutdown(log: Logger, timeoutMs: number, shutdown: () => Promise<void>) {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    const hard = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs);
    hard.unref();
    shutdown().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => handler('SIGTERM'));
  process.once('SIGINT', () => handler('SIGINT'));
}

/** What a pillar process reads besides its pillar's own settings: the base settings and its health server's. */
export const pillarProcessConfig = baseConfig.extend({
  HEALTH_PORT: setting.int(0, 65535).default(0),
  HEALTH_HOST: listenHost.default('127.0.0.1'),
});

/**
 * A pillar's own settings schema on top of `base`, typed as the base (what the platform's code here reads); the
 * pillar's code reads its own through its definition (SettingsOf<Own>).
 */
function withBase<Shape extends z.ZodRawShape>(base: z.ZodObject<Shape>, def: AnyPillarDefinition) {
  const own: z.ZodObject<{}> = def.settings; // its type is open in AnyPillarDefinition; the base's is known
  return base.extend(own.shape);
}

/** Entry point of a pillar as its own OS process (distributed mode). */
export async function runPillarProcess(def: AnyPillarDefinition) {
  // One schema for everything this process reads: the base settings, the health server's, the pillar's own.
  const cfg = loadConfig(withBase(pillarProcessConfig, def));
  await runMain(def.name, () => startPillarProcess(def, cfg));
}

async function startPillarProcess(def: AnyPillarDefinition, cfg: z.infer<typeof pillarProcessConfig>) {
  const log = createLogger(def.name, cfg.LOG_LEVEL);
  const at: HealthAddress = { setting: 'HEALTH_PORT', port: cfg.HEALTH_PORT, host: cfg.HEALTH_HOST };
  // First, so an operator finds each replica's health port in its own log (start:distributed gives each its own).
  const health = at.port ? urlOf(at) : 'off (HEALTH_PORT=0)';
  log.info({ pillar: def.pillar, pid: process.pid, health }, 'starting');
  await startTracing(def.name, cfg); // OTEL_EXPORTER_OTLP_ENDPOINT set: spans exported; unset: nothing is loaded
  const infra = await connectInfra(def.name, cfg, def.migrations ? [def.migrations] : [], log);
  const pillar = await startPillar(def, infra, log, { settings: cfg });
  const server = at.port ? healthServer(infra, at, log, cfg.EVENT_STALL_READY_MS) : undefined;
  watchOutbox(infra.db);
  log.info({ pillar: def.pillar, pid: process.pid, health }, 'pillar ready');
  onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, async () => {
    server?.close();
    await infra.bus.drain(); // stops new requests, lets in-flight replies go out
    await pillar.stop();
    await infra.db.close();
    await infra.kv.close();
    await stopTracing(); // the last spans are sent
  });
}
