import { closeGracefully } from '@vcs/gateway';
import { capabilityByName } from '@vcs/contract';
import {
  anonymousContext,
  createLogger,
  healthServer,
  loadConfig,
  onShutdown,
  portInUse,
  runMain,
  sendCapability,
  startTracing,
  stopTracing,
} from '@vcs/platform';
import { embeddedConfig, PGLITE_SEED, startEmbedded } from './index.ts';

/** Decoded once at start: a Toyota VIN (WMI 2T1, 2018) that no test or bench decodes. */
const WARM_UP_VIN = '2T1BURHEXJC043821';

// `pnpm start`: the whole service in one process, nothing to install. The gateway's settings and every pillar's.
const cfg = loadConfig(embeddedConfig);
const log = createLogger('vcs-embedded', cfg.LOG_LEVEL);
await runMain('vcs-embedded', async () => {
  await startTracing('vcs-embedded', cfg); // before the gateway is built: it traces requests only when tracing is on
  const svc = await startEmbedded({
    pgliteDir: cfg.PGLITE_DIR,
    pgliteSeed: PGLITE_SEED,
    log,
    settings: cfg, // the gateway's config is made from them as the gateway process makes its own (gatewayConfigOf)
  });
  // One decode through the bus and the data pillar before the port opens (a VIN of its own: nothing is written), so a
  // caller's first decode does not pay for compiling that path (bench start figures: docs/performance.md).
  await sendCapability(
    svc.infra.bus,
    capabilityByName('vehicle.decode')!,
    { vin: WARM_UP_VIN },
    anonymousContext('warm-up'),
    cfg.BUS_TIMEOUT_MS,
  );
  await svc.app.listen({ port: cfg.PORT, host: cfg.HOST }).catch(async (e) => {
    await svc.stop(); // the data directory is closed and its lock released before the one line
    throw portInUse(e, 'PORT', cfg.HOST, cfg.PORT);
  });
  const metricsAt = { setting: 'METRICS_PORT', port: cfg.METRICS_PORT, host: cfg.METRICS_HOST } as const;
  const metrics = cfg.METRICS_PORT ? healthServer(svc.infra, metricsAt, log) : undefined;
  const { port } = svc.app.server.address() as { port: number };
  log.info({ url: `http://${cfg.HOST}:${port}` }, 'Vehicle Capability Service (embedded) is listening');
  onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeGracefully(svc.app); // keep-alive clients are told to close; accepted requests finish
    metrics?.close();
    await svc.stop();
    await stopTracing();
  });
});
