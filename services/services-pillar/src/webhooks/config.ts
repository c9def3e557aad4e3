import ipaddr from 'ipaddr.js';

/**
 * Delivery settings, read from the environment once when the worker starts (both modes: the embedded
 * process and the services-pillar process read the same variables).
 */
export interface DeliveryConfig {
  /** Delay before each attempt; attempt n waits schedule[n-1]. Standard Webhooks' schedule by default. */
  scheduleMs: number[];
  /** ± fraction of each delay, so retries of many deliveries do not arrive in lockstep. */
  jitter: number;
  allowPrivateTargets: boolean;
  /**
   * Loopback only (a receiver on this machine): on by default in the embedded mode while it listens on loopback
   * (a local development server); off when it listens on another address, where a remote caller could otherwise
   * make it POST to its own machine's services and read the answers in the delivery log.
   */
  allowLoopbackTargets: boolean;
  timeoutMs: number;
  responseCapBytes: number;
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** How long the previous secret keeps signing after a rotation. */
  rotationGraceMs: number;
  perEndpointConcurrency: number;
  poolSize: number;
  pollMs: number;
}

const h = 3_600_000;
export const STANDARD_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h];

function num(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`config error: ${name}: expected a non-negative number, got "${raw}"`);
  return n;
}

/** The embedded process listens where HOST says (127.0.0.1 unless set): is that this machine only? */
function listensOnLoopback(host = '127.0.0.1'): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || (ipaddr.isValid(h) && ipaddr.parse(h).range() === 'loopback');
}

export function deliveryConfig(env = process.env, opts: { embedded?: boolean } = {}): DeliveryConfig {
  const raw = env.WEBHOOK_RETRY_SCHEDULE_MS;
  const scheduleMs = raw ? raw.split(',').map((x) => Number(x.trim())) : STANDARD_SCHEDULE_MS;
  if (!scheduleMs.length || scheduleMs.some((x) => !Number.isFinite(x) || x < 0)) {
    throw new Error(`config error: WEBHOOK_RETRY_SCHEDULE_MS: expected comma-separated milliseconds, got "${raw}"`);
  }
  return {
    scheduleMs,
    jitter: num(env, 'WEBHOOK_RETRY_JITTER', 0.1),
    allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true',
    allowLoopbackTargets: env.WEBHOOK_ALLOW_LOOPBACK_TARGETS ? env.WEBHOOK_ALLOW_LOOPBACK_TARGETS === 'true' : opts.embedded === true && listensOnLoopback(env.HOST),
    timeoutMs: num(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    responseCapBytes: num(env, 'WEBHOOK_RESPONSE_CAP_BYTES', 4_096),
    disableAfterMs: num(env, 'WEBHOOK_DISABLE_AFTER_MS', 5 * 24 * h),
    rotationGraceMs: num(env, 'WEBHOOK_ROTATION_GRACE_MS', 24 * h),
    perEndpointConcurrency: num(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 4),
    poolSize: num(env, 'WEBHOOK_POOL_SIZE', 64),
    pollMs: num(env, 'WEBHOOK_POLL_MS', 200),
  };
}

/** The delay before attempt `n + 1` after `n` attempts, with jitter; null when attempts have run out. */
export function nextDelayMs(cfg: DeliveryConfig, attemptsMade: number, rand = Math.random): number | null {
  const base = cfg.scheduleMs[attemptsMade];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 + cfg.jitter * (2 * rand() - 1))));
}
