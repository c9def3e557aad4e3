import {
  connectInfra,
  createLogger,
  healthServer,
  urlOf,
  loadConfig,
  onShutdown,
  portInUse,
  runMain,
  startTracing,
  stopTracing,
} from '@vcs/platform';
import { buildApp } from './app.ts';
import { gatewayConfig, gatewayConfigOf } from './config.ts';
import { closeGracefully } from './shutdown.ts';

// The gateway as its own process (distributed mode).
const cfg = loadConfig(gatewayConfig);
const log = createLogger('gateway', cfg.LOG_LEVEL);
await runMain('gateway', async () => {
  // First, so an operator finds each replica's ports in its own log (start:distributed gives each its own).
  const metricsAt = { setting: 'METRICS_PORT', port: cfg.METRICS_PORT, host: cfg.METRICS_HOST } as const;
  const serves = urlOf({ port: cfg.PORT, host: cfg.HOST });
  log.info({ pid: process.pid, serves, health: cfg.METRICS_PORT ? urlOf(metricsAt) : serves }, 'starting');
  await startTracing('gateway', cfg); // before buildApp: it traces requests only when tracing is on
  const infra = await connectInfra('gateway', cfg, [], log); // the gateway owns no tables
  const app = await buildApp({
    ...infra,
    log,
    config: gatewayConfigOf(cfg), // a facilitator without a payee or chain node: one line, exit 78
  });
  await app.listen({ port: cfg.PORT, host: cfg.HOST }).catch((e) => {
    throw portInUse(e, 'PORT', cfg.HOST, cfg.PORT); // exit 75: start:distributed tries it again
  });
  const metrics = cfg.METRICS_PORT ? healthServer(infra, metricsAt, log) : undefined;
  onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeGracefully(app); // stops accepting, lets accepted and in-flight requests finish
    metrics?.close();
    await infra.bus.drain();
    await infra.db.close();
    await infra.kv.close();
    await stopTracing();
  });
});
