import type { FastifyInstance } from 'fastify';
import { commercePillar } from '@vcs/commerce';
import { dataPillar } from '@vcs/data';
import { buildApp, gatewayConfig, gatewayConfigOf, type GatewayConfig, type RateLimits } from '@vcs/gateway';
import {
  MemoryBus,
  OutboxRelay,
  createMemoryKv,
  withDurableCounters,
  createPgliteDb,
  isIdles,
  migrate,
  parseSettings,
  platformMigrations,
  settled,
  startPillar,
  systemClock,
  type Clock,
  type Idles,
  type Infra,
  type Migrations,
  type Logger,
  type AnyPillarDefinition,
  type PillarDefinition,
  type StartedPillar,
} from '@vcs/platform';
import { pillars, type Pillar } from '@vcs/contract';
import { listensOnLoopback, servicesPillar } from '@vcs/services-pillar';
import { workflowsPillar } from '@vcs/workflows';

export { PGLITE_SEED } from './seed.ts';

/** Each pillar of the catalog (`pillars`, libs/contract) and its definition: a pillar without one does not compile. */
const definitions = {
  data: dataPillar,
  services: servicesPillar,
  commerce: commercePillar,
  workflows: workflowsPillar,
} satisfies { [P in Pillar]: PillarDefinition<P, any> };
export const allPillars: AnyPillarDefinition[] = pillars.map((p) => definitions[p]);

/** The platform's tables and every pillar's, for a store all of them share. */
export const allMigrations: Migrations[] = [
  platformMigrations,
  ...allPillars.flatMap((p) => (p.migrations ? [p.migrations] : [])),
];

type AllOf<U> = (U extends unknown ? (u: U) => void : never) extends (u: infer I) => void ? I : never;
/** Every pillar's own settings in one shape (typed as all of them: a pillar's schema cannot be left out). */
const pillarShapes: AllOf<(typeof definitions)[Pillar]['settings']['shape']> = Object.assign(
  {},
  ...allPillars.map((p) => p.settings.shape),
);

/** Everything the embedded process reads: the gateway's settings and every pillar's, one schema parsed once. */
export const embeddedConfig = gatewayConfig.extend(pillarShapes);
export type EmbeddedSettings = ReturnType<typeof parseSettings<typeof embeddedConfig>>;

/**
 * The settings as the pillars are given them. This process is a local development server: unset,
 * WEBHOOK_ALLOW_LOOPBACK_TARGETS is on while it listens (HOST) on this machine only (listensOnLoopback says why).
 */
const pillarSettingsOf = (s: EmbeddedSettings): EmbeddedSettings => ({
  ...s,
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: s.WEBHOOK_ALLOW_LOOPBACK_TARGETS ?? listensOnLoopback(s.HOST),
});

/** The gateway's config from the settings (gatewayConfigOf, as the gateway process), with what a test overrides. */
function gatewayConfigFor(settings: EmbeddedSettings, opts: EmbeddedOptions): GatewayConfig {
  const c = gatewayConfigOf(settings, { embedded: true }); // a wrong X402_* setting stops the start here
  return {
    ...c,
    busTimeoutMs: opts.busTimeoutMs ?? c.busTimeoutMs,
    bodyLimitBytes: opts.bodyLimitBytes ?? c.bodyLimitBytes,
    publicBaseUrl: opts.publicBaseUrl ?? c.publicBaseUrl,
    trustProxy: opts.trustProxy ?? c.trustProxy,
    rateLimits: opts.rateLimits ?? c.rateLimits,
    metricsOnPublicPort: opts.metricsOnPublicPort ?? c.metricsOnPublicPort,
  };
}

export interface EmbeddedOptions {
  /** PGlite data directory, or `memory://`. */
  pgliteDir: string;
  /** A data directory prepared by the build (PGLITE_SEED), copied into an empty `pgliteDir` (createPgliteDb). */
  pgliteSeed?: string;
  log: Logger;
  clock?: Clock;
  busTimeoutMs?: number;
  bodyLimitBytes?: number;
  publicBaseUrl?: string;
  trustProxy?: boolean | number | string[];
  /** Calls a minute per class (RATE_LIMIT_* unless given). */
  rateLimits?: RateLimits;
  /** False when /metrics is served on its own port (METRICS_PORT). */
  metricsOnPublicPort?: boolean;
  /**
   * The parsed `embeddedConfig` (main.ts); without it (tests) it is parsed here, once, from the environment. The
   * gateway's config comes from it, but for the members above that a test gives.
   */
  settings?: EmbeddedSettings;
}

/** The gateway and every pillar in one process: in-process bus, PGlite, in-memory stand-in for Redis. */
export async function startEmbedded(
  opts: EmbeddedOptions,
): Promise<{ app: FastifyInstance; infra: Infra; settled(): Promise<void>; stop(): Promise<void> }> {
  const settings = pillarSettingsOf(opts.settings ?? parseSettings(embeddedConfig));
  const gateway = gatewayConfigFor(settings, opts);
  const db = await createPgliteDb(opts.pgliteDir, opts.pgliteSeed);
  await migrate(db, allMigrations);
  const clock = opts.clock ?? systemClock;
  const bus = new MemoryBus(opts.log.child({ component: 'bus' }));
  // Usage counters are kept in the database, so they survive a restart; the rest of the stand-in is in memory.
  const kv = await withDurableCounters(createMemoryKv(clock), db);
  const infra: Infra = { bus, db, kv, clock, mode: 'embedded' };
  // The only relay on this store: it holds no row locks (outbox.ts).
  const relay = new OutboxRelay(db, infra.bus, opts.log.child({ component: 'outbox' }), 250, true).start();
  const pillars: StartedPillar[] = [];
  for (const p of allPillars)
    pillars.push(await startPillar(p, infra, opts.log.child({ component: p.name }), { relay, settings }));
  // The relay, the bus's consumers and each background worker that can say it is idle (the webhook sender).
  const idles: Idles[] = [relay, bus, ...pillars.flatMap((p) => p.background).filter(isIdles)];
  const app = await buildApp({
    ...infra,
    log: opts.log.child({ component: 'gateway' }),
    config: gateway,
  });
  return {
    app,
    infra,
    /** Every event written so far relayed, handled by every consumer, and no webhook delivery due or in flight. */
    settled: () => settled(idles),
    async stop() {
      await app.close();
      for (const p of pillars) await p.stop();
      await relay.stop();
      await infra.bus.drain();
      await db.close();
    },
  };
}
