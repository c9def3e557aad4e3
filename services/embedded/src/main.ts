import { gatewayConfig } from '@vcs/gateway';
import { createLogger, loadConfig, onShutdown } from '@vcs/platform';
import { startEmbedded } from './index.ts';

// `pnpm start`: the whole service in one process, nothing to install. Same settings as the gateway's.
const cfg = loadConfig(gatewayConfig);
const log = createLogger('vcs-embedded', cfg.LOG_LEVEL);
const svc = await startEmbedded({
  pgliteDir: cfg.PGLITE_DIR, log, busTimeoutMs: cfg.BUS_TIMEOUT_MS, bodyLimitBytes: cfg.BODY_LIMIT_BYTES, publicBaseUrl: cfg.PUBLIC_BASE_URL,
});
await svc.app.listen({ port: cfg.PORT, host: cfg.HOST });
log.info({ url: `http://${cfg.HOST}:${cfg.PORT}` }, 'Vehicle Capability Service (embedded) is listening');
onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, () => svc.stop());
