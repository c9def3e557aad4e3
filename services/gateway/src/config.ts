import { z } from 'zod';
import { baseConfig, listenHost, setting, x402Settings, x402Terms } from '@vcs/platform';
import { LIMITS } from './app.ts';
import { isIP } from 'node:net';
import { rateLimitEnv, rateLimitsFrom } from './rateLimit.ts';
import type { GatewayConfig } from './deps.ts';
import { receiptSignerOf } from './money/extensions.ts';

/**
 * Which proxies' X-Forwarded-For to believe, so that each client behind a load balancer has its own address (and
 * its own anonymous rate limit). Off by default: believed from anyone, the header lets a caller pick its address.
 * `true` (every hop), a hop count (`1`), or a comma-separated list of proxy addresses and CIDRs.
 */
export const trustProxySetting = z
  .string()
  .default('')
  .transform((raw, ctx): boolean | number | string[] => {
    const v = raw.trim();
    if (v === '' || v === 'false') return false;
    if (v === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v);
    const list = v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const bad = list.find((x) => {
      const [ip, bits, ...rest] = x.split('/');
      return rest.length > 0 || !isIP(ip!) || (bits !== undefined && !/^\d{1,3}$/.test(bits));
    });
    if (bad !== undefined)
      ctx.addIssue({
        code: 'custom',
        message: `"${bad}" is not an address or CIDR; give true, a hop count, or addresses/CIDRs separated by commas`,
      });
    return list;
  });

export const gatewayConfig = baseConfig.extend({
  ...rateLimitEnv.shape,
  ...x402Settings.shape,
  PORT: setting.int(0, 65535).default(8080),
  HOST: listenHost.default('127.0.0.1'),
  BODY_LIMIT_BYTES: setting.int(1024, 50 * 1024 * 1024).default(LIMITS.bodyBytes),
  PUBLIC_BASE_URL: setting.unsetWhenEmpty(z.string().url()),
  TRUST_PROXY: trustProxySetting,
  /** Serve /metrics (with /healthz and /readyz) on this port instead of the public one; 0 = the public port. */
  METRICS_PORT: setting.int(0, 65535).default(0),
  METRICS_HOST: listenHost.default('127.0.0.1'),
});
export type GatewayEnv = z.infer<typeof gatewayConfig>;

/**
 * The gateway's config from its parsed settings, in one place (the gateway process and the embedded one both use it;
 * a default lives in the schema above, never restated here). Its x402 terms can refuse the start: a facilitator set
 * without a payee or a chain node is a config error (one line, exit 78). `embedded`: an unset X402_RECEIPT_SIGNING_KEY
 * means the dev-only key (the embedded process is a local development server); elsewhere it means nothing is signed.
 */
export function gatewayConfigOf(cfg: GatewayEnv, opts: { embedded: boolean } = { embedded: false }): GatewayConfig {
  return {
    busTimeoutMs: cfg.BUS_TIMEOUT_MS,
    bodyLimitBytes: cfg.BODY_LIMIT_BYTES,
    publicBaseUrl: cfg.PUBLIC_BASE_URL?.replace(/\/+$/, ''), // links append paths to it
    trustProxy: cfg.TRUST_PROXY,
    rateLimits: rateLimitsFrom(cfg),
    metricsOnPublicPort: cfg.METRICS_PORT === 0,
    x402: x402Terms(cfg),
    receiptSigner: receiptSignerOf(cfg.X402_RECEIPT_SIGNING_KEY, opts),
    paymentHoldMs: cfg.X402_PAYMENT_HOLD_MS,
  };
}
