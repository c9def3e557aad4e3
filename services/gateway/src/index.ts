export { buildApp, LIMITS } from './app.ts';
export { gatewayConfig, gatewayConfigOf } from './config.ts';
export type { GatewayDeps, GatewayGiven, GatewayConfig } from './deps.ts';
export { rateLimitsFrom, type RateLimits } from './rateLimit.ts';
export { closeGracefully } from './shutdown.ts';
export { rateLimitRefusals, requestsTotal, metricsRegistry } from './metrics.ts';
export { busRequestSeconds } from '@vcs/platform';
