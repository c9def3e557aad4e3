export { buildApp, LIMITS } from './app.ts';
export type { GatewayDeps, GatewayConfig } from './deps.ts';
