import type { FastifyInstance } from 'fastify';
import { commercePillar } from '@vcs/commerce';
import { dataPillar } from '@vcs/data';
import { buildApp, gatewayConfig, gatewayDefaults, type GatewayConfig, type RateLimits } from '@vcs/gateway';
import {
  MemoryBus,
  OutboxRelay,
  createMemoryKv,
  createPgliteDb,
  isIdles,
  migrate,
  platformMigrations,
  settled,
  startPillar,
  systemClock,
  x402Terms,
  type X402Settings,
  type Clock,
  type Idles,
  type Infra,
  type Migrations,
  type Logger,
  type AnyPillarDefinition,
  type PillarDefinition,
  type Stoppable,
} from '@vcs/platform';
import { pillars, type Pillar } from '@vcs/contract';
import { servicesPillar } from '@vcs/services-pillar';
import { workflowsPillar } from '@vcs/workflows';

/** Each pillar of the catalog (`pillars`, libs/contract) and its definition: a pillar without one does not compile. */
const definitions: { [P in Pillar]: PillarDefinition<P> } = {
  data: dataPillar,
  services: servicesPillar,
  commerce: commercePillar,
  workflows: workflowsPillar,
};
export const allPillars: AnyPillarDefinition[] = pillars.map((p) => definitions[p]);

/** The platform's tables and every pillar's, for a store all of them share. */
export const allMigrations: Migrations[] = [
  platformMigrations,
  ...allPillars.flatMap((p) => (p.migrations ? [p.migrations] : [])),
];

/** Everything the embedded process reads: the gateway's settings and every pillar's, one schema parsed once. */
export const embeddedConfig = gatewayConfig.extend(
  Object.assign({}, ...allPillars.map((p) => p.settings?.shape ?? {})),
) as unknown as typeof gatewayConfig;

/** A test's gateway config: the settings' defaults (gatewayDefaults: none restated here) with what it overrides. */
function gatewayConfigFor(opts: EmbeddedOptions): GatewayConfig {
  const d = gatewayDefaults();
  return {
    ...d,
    busTimeoutMs: opts.busTimeoutMs ?? d.busTimeoutMs,
    bodyLimitBytes: opts.bodyLimitBytes ?? d.bodyLimitBytes,
    publicBaseUrl: opts.publicBaseUrl,
    trustProxy: opts.trustProxy ?? d.trustProxy,
    rateLimits: opts.rateLimits ?? d.rateLimits,
    metricsOnPublicPort: opts.metricsOnPublicPort ?? d.metricsOnPublicPort,
    x402: x402Terms((opts.settings ?? {}) as Partial<X402Settings>),
  };
}

export interface EmbeddedOptions {
  /** PGlite data directory, or `memory://`. */
  pgliteDir: string;
  log: Logger;
  clock?: Clock;
  busTimeoutMs?: number;
  bodyLimitBytes?: number;
  publicBaseUrl?: string;
  trustProxy?: boolean | number | string[];
  /** Calls a minute per class; the settings' defaults unless given (the environment is read by main.ts only). */
  rateLimits?: RateLimits;
  /** False when /metrics is served on its own port (METRICS_PORT). */
  metricsOnPublicPort?: boolean;
  /** The parsed `embeddedConfig`; without it (tests) each pillar parses its own settings from the environment. */
  settings?: Record<string, unknown>;
  /** The gateway's whole config, parsed from the settings (main.ts); the members above then change nothing. */
  gateway?: GatewayConfig;
}

function noteIdles(background: Stoppable[], into: Idles[]): Stoppable[] {
  for (const b of background) if (isIdles(b)) into.push(b);
  return background;
}

/** The gateway and every pillar in one process: in-process bus, PGlite, in-memory stand-in for Redis. */
export async function startEmbedded(
  opts: EmbeddedOptions,
): Promise<{ app: FastifyInstance; infra: Infra; settled(): Promise<void>; stop(): Promise<void> }> {
  const db = await createPgliteDb(opts.pgliteDir);
  await migrate(db, allMigrations);
  const clock = opts.clock ?? systemClock;
  const infra: Infra = { bus: new MemoryBus(), db, kv: createMemoryKv(clock), clock, mode: 'embedded' };
  // The only relay on this store: it holds no row locks (outbox.ts).
  const relay = new OutboxRelay(db, infra.bus, opts.log.child({ component: 'outbox' }), 250, true).start();
  const pillars: Stoppable[] = [];
  const bus = infra.bus as MemoryBus;
  // The relay, the bus's consumers and each background worker that can say it is idle (the webhook sender).
  const idles: Idles[] = [relay, bus];
  for (const p of allPillars) {
    const background = p.background;
    const def = background ? { ...p, background: async (s: never) => noteIdles(await background(s), idles) } : p;
    pillars.push(
      await startPillar(def as AnyPillarDefinition, infra, opts.log.child({ component: p.name }), {
        relay,
        settings: opts.settings,
      }),
    );
  }
  const app = await buildApp({
    ...infra,
    log: opts.log.child({ component: 'gateway' }),
    config: opts.gateway ?? gatewayConfigFor(opts),
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
