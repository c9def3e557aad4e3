import {
  connectInfra,
  createLogger,
  healthServer,
  loadConfig,
  onShutdown,
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
  await startTracing('gateway', cfg); // before buildApp: it traces requests only when tracing is on
  const infra = await connectInfra('gateway', cfg, [], log); // the gateway owns no tables
  const app = await buildApp({
    ...infra,
    log,
    config: gatewayConfigOf(cfg), // a facilitator without a payee or chain node: one line, exit 78
  });
  await app.listen({ port: cfg.PORT, host: cfg.HOST });
  const metrics = cfg.METRICS_PORT ? healthServer(infra, cfg.METRICS_PORT, cfg.METRICS_HOST) : undefined;
  onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeGracefully(app); // stops accepting, lets accepted and in-flight requests finish
    metrics?.close();
    await infra.bus.drain();
    await infra.db.close();
    await infra.kv.close();
    await stopTracing();
  });
});
