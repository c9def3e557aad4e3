import type { Bus, Clock, Db, Kv, Logger, X402Terms } from '@vcs/platform';
import type { RateLimits } from './rateLimit.ts';
import type { ReceiptSigner } from './money/extensions.ts';
import type { DecodeCache } from './decode.ts';

export interface GatewayConfig {
  busTimeoutMs: number;
  bodyLimitBytes: number;
  /** Public base URL used in links (defaults to the request's own origin). */
  publicBaseUrl?: string;
  /** Whose X-Forwarded-For sets the client address (TRUST_PROXY); off unless set. */
  trustProxy?: boolean | number | string[];
  /** Calls a minute per class (RATE_LIMIT_*, parsed by whoever starts the gateway: buildApp reads no environment). */
  rateLimits: RateLimits;
  /** False when /metrics is served on its own port (METRICS_PORT), off the public one. */
  metricsOnPublicPort?: boolean;
  /**
   * The x402 rail's terms (X402_* settings, made once by gatewayConfigOf): offers name its network, asset and payee;
   * payments are taken when it is live, and with no facilitator set the offers are only mirrored on x402.
   */
  x402: X402Terms;
  /**
   * Who signs the 402's offers and the paid answers' receipts (X402_RECEIPT_SIGNING_KEY; the dev-only key in the
   * embedded mode when unset); null: nothing is signed.
   */
  receiptSigner: ReceiptSigner | null;
  /** How long a paid request is held while its outcome is decided (X402_PAYMENT_HOLD_MS), before a 503. */
  paymentHoldMs: number;
}

/** Everything the gateway needs, injected so tests build it with `app.inject()` on real or embedded infra. */
export interface GatewayDeps {
  bus: Bus;
  db: Db;
  kv: Kv;
  clock: Clock;
  log: Logger;
  config: GatewayConfig;
  /** The decodes this gateway keeps (decode.ts); buildApp makes one per instance (callers give `GatewayGiven`). */
  decodes: DecodeCache;
}

/** What a caller gives buildApp: the gateway's dependencies less what buildApp makes for each instance. */
export type GatewayGiven = Omit<GatewayDeps, 'decodes'>;
