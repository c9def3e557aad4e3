import { z } from 'zod';
import { baseConfig, createLogger, loadConfig, onShutdown } from '@vcs/platform';
import { startEmbedded } from './index.ts';

// `pnpm start`: the whole service in one process, nothing to install.
const cfg = loadConfig(baseConfig.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  PUBLIC_BASE_URL: z.string().url().optional(),
}));
const log = createLogger('vcs-embedded', cfg.LOG_LEVEL);
const svc = await startEmbedded({
  pgliteDir: cfg.PGLITE_DIR, log, busTimeoutMs: cfg.BUS_TIMEOUT_MS, bodyLimitBytes: cfg.BODY_LIMIT_BYTES, publicBaseUrl: cfg.PUBLIC_BASE_URL,
});
await svc.app.listen({ port: cfg.PORT, host: cfg.HOST });
log.info({ url: `http://${cfg.HOST}:${cfg.PORT}` }, 'Vehicle Capability Service (embedded) is listening');
onShutdown(log, cfg.SHUTDOWN_TIMEOUT_MS, () => svc.stop());
