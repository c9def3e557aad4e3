export { buildApp, LIMITS } from './app.ts';
export type { GatewayDeps, GatewayConfig } from './deps.ts';
export { closeGracefully } from './shutdown.ts';
export { rateLimitRefusals, requestsTotal, busRequestSeconds, metricsRegistry } from './metrics.ts';
