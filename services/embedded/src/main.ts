import { closeGracefully } from '@vcs/gateway';
import { createLogger, healthServer, loadConfig, onShutdown, runMain, startTracing, stopTracing } from '@vcs/platform';
import { embeddedConfig, PGLITE_SEED, startEmbedded } from './index.ts';

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
  await svc.app.listen({ port: cfg.PORT, host: cfg.HOST });
  const metrics = cfg.METRICS_PORT ? healthServer(svc.infra, cfg.METRICS_PORT, cfg.METRICS_HOST) : undefined;
  const { port } = svc.app.server.address() as { port: number };
  log.info({ url: `http://${cfg.HOST}:${port}` }, 'Vehicle Capability Service (embedded) is listening');
  onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeGracefully(svc.app); // keep-alive clients are told to close; accepted requests finish
    metrics?.close();
    await svc.stop();
    await stopTracing();
  });
});
