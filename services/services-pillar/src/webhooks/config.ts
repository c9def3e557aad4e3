import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { setting, type Services, type SettingsOf } from '@vcs/platform';

/**
 * Delivery settings, from the settings parsed once at start (both modes: the embedded process and the
 * services-pillar process read the same variables).
 */
export interface DeliveryConfig {
  /** Delay before each attempt; attempt n waits schedule[n-1]. Standard Webhooks' schedule by default. */
  scheduleMs: number[];
  /** ± fraction of each delay, so retries of many deliveries do not arrive in lockstep. */
  jitter: number;
  allowPrivateTargets: boolean;
  /** Loopback only (a receiver on this machine): WEBHOOK_ALLOW_LOOPBACK_TARGETS (unset: see `listensOnLoopback`). */
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

const ms = setting.int(0, 2 ** 31 - 1);
/** Comma-separated milliseconds, one delay per attempt. */
const schedule = z
  .string()
  .trim()
  .transform((raw, ctx) => {
    const list = raw.split(',').map((x) => Number(x.trim()));
    if (!list.length || list.some((x) => !Number.isInteger(x) || x < 0))
      ctx.addIssue({ code: 'custom', message: 'expected comma-separated whole milliseconds, such as 0,5000,300000' });
    return list;
  });

/**
 * The webhook delivery settings (README's table and docs/webhooks.md), parsed once at start into `services.settings`.
 */
export const webhookSettings = z.object({
  WEBHOOK_RETRY_SCHEDULE_MS: schedule.default(STANDARD_SCHEDULE_MS),
  WEBHOOK_RETRY_JITTER: setting.decimal(0, 1).default(0.1),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: setting.bool.default(false),
  /** Unset: off, except in the embedded process while it listens on this machine only (`listensOnLoopback`). */
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: setting.bool.optional(),
  WEBHOOK_TIMEOUT_MS: ms.default(10_000),
  WEBHOOK_RESPONSE_CAP_BYTES: setting.int(0, 1 << 20).default(4_096),
  WEBHOOK_DISABLE_AFTER_MS: ms.default(5 * 24 * h),
  WEBHOOK_ROTATION_GRACE_MS: ms.default(24 * h),
  WEBHOOK_ENDPOINT_CONCURRENCY: setting.int(1, 1000).default(4),
  WEBHOOK_POOL_SIZE: setting.int(1, 10_000).default(256),
  WEBHOOK_POLL_MS: setting.int(10, 600_000).default(200),
});
export type WebhookSettings = z.infer<typeof webhookSettings>;
/** What the webhook sender is given: the base settings and the delivery ones, typed. */
export type WebhookServices = Services<SettingsOf<typeof webhookSettings>>;

/**
 * Whether a process serving HTTP at `host` (its HOST) serves this machine only. The embedded process, a local
 * development server, then lets WEBHOOK_ALLOW_LOOPBACK_TARGETS default to on (a receiver on this machine); listening
 * on another address, a remote caller could make it POST to its own machine's services and read the answers in the
 * delivery log. A services-pillar process serves no HTTP and knows no such address: unset is off there.
 */
export function listensOnLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || (ipaddr.isValid(h) && ipaddr.parse(h).range() === 'loopback');
}

/** Delivery settings from the parsed ones. */
export function deliveryConfig(s: WebhookSettings): DeliveryConfig {
  return {
    scheduleMs: s.WEBHOOK_RETRY_SCHEDULE_MS,
    jitter: s.WEBHOOK_RETRY_JITTER,
    allowPrivateTargets: s.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    allowLoopbackTargets: s.WEBHOOK_ALLOW_LOOPBACK_TARGETS === true,
    timeoutMs: s.WEBHOOK_TIMEOUT_MS,
    responseCapBytes: s.WEBHOOK_RESPONSE_CAP_BYTES,
    disableAfterMs: s.WEBHOOK_DISABLE_AFTER_MS,
    rotationGraceMs: s.WEBHOOK_ROTATION_GRACE_MS,
    perEndpointConcurrency: s.WEBHOOK_ENDPOINT_CONCURRENCY,
    poolSize: s.WEBHOOK_POOL_SIZE,
    pollMs: s.WEBHOOK_POLL_MS,
  };
}

/** The delay before attempt `n + 1` after `n` attempts, with jitter; null when attempts have run out. */
export function nextDelayMs(cfg: DeliveryConfig, attemptsMade: number, rand = Math.random): number | null {
  const base = cfg.scheduleMs[attemptsMade];
  if (base === undefined) return null;
  return Math.max(0, Math.round(base * (1 + cfg.jitter * (2 * rand() - 1))));
}
