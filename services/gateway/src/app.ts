import Fastify, { type FastifyInstance } from 'fastify';
import { blocked, newId } from '@vcs/contract';
import type { GatewayDeps } from './deps.ts';
import { sendAnswer, sendBlocked } from './reply.ts';
import { capabilityRoutes } from './routes/capabilities.ts';
import { dealRoutes } from './routes/deals.ts';
import { keyRoutes } from './routes/keys.ts';
import { decodeRoutes } from './routes/decode.ts';
import { catalogRoutes } from './routes/discovery/catalog.ts';
import { documentRoutes } from './routes/discovery/documents.ts';
import { suiteRoutes } from './routes/discovery/suite.ts';
import { doorRoutes } from './routes/doors.ts';
import { recordRoutes } from './routes/record.ts';
import { moneyRoutes } from './routes/money.ts';
import { pricingRoutes } from './routes/pricing.ts';
import { keysMeRoute } from './routes/keysMe.ts';
import { registerIdempotency } from './idempotency.ts';
import { registerKeyChangeNotices } from './keyCache.ts';
import { Meter, registerMeter } from './meter.ts';
import { registerRateLimits } from './rateLimit.ts';
import { registerScopeCheck } from './scopes.ts';
import { mcpRoutes } from './routes/mcp.ts';

export const LIMITS = { bodyBytes: 1_048_576, jsonDepth: 32, headerBytes: 16_384, paramLength: 200 };

function depthOf(v: unknown, d = 0): number {
  if (d > LIMITS.jsonDepth) return d;
  if (v && typeof v === 'object') {
    let max = d + 1;
    for (const x of Object.values(v)) max = Math.max(max, depthOf(x, d + 1));
    return max;
  }
  return d;
}

/** Build the gateway: every route derived from the catalog, every failure a typed envelope. */
export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as unknown as import("fastify").FastifyBaseLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => newId('request'),
    routerOptions: { maxParamLength: LIMITS.paramLength, ignoreTrailingSlash: true },
    return503OnClosing: true,
  });

  // JSON bodies: an empty body means "no input" ({}); bodies nested deeper than the limit are refused.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (!text.trim()) return done(null, {});
    try {
      const parsed = JSON.parse(text, (k, v) => (k === '__proto__' ? undefined : v));
      if (depthOf(parsed) > LIMITS.jsonDepth) return done(Object.assign(new Error(`JSON nested deeper than ${LIMITS.jsonDepth} levels`), { statusCode: 400, code: 'VCS_JSON_DEPTH' }), undefined);
      done(null, parsed);
    } catch (e) {
      done(Object.assign(new Error(`malformed JSON: ${(e as Error).message}`), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON' }), undefined);
    }
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setNotFoundHandler((req, reply) =>
    sendBlocked(reply, 'not-found', `no route ${req.method} ${req.url.split('?')[0]}; the catalog of routes is at GET /catalog`),
  );

  app.setErrorHandler((err: any, req, reply) => {
    const status = err.statusCode ?? 500;
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return sendBlocked(reply, 'payload-too-large', `the body is larger than ${deps.config.bodyLimitBytes} bytes`);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return sendBlocked(reply, 'unsupported-media-type', 'send the body as application/json');
    if (err.code === 'FST_ERR_CTP_INVALID_JSON' || err.code === 'VCS_JSON_DEPTH' || err instanceof SyntaxError) return sendBlocked(reply, 'malformed-json', err.message);
    if (status >= 400 && status < 500) return sendBlocked(reply, 'invalid-input', err.message);
    req.log.error({ err }, 'unhandled error');
    const storeDown = /ECONNREFUSED|Connection terminated|StoreUnavailable|timeout exceeded when trying to connect/i.test(String(err.message)) || err.name === 'StoreUnavailableError';
    if (storeDown) return sendBlocked(reply, 'store-unavailable', 'a store this call needs is unreachable; retry shortly');
    return sendAnswer(reply, blocked('internal', `the gateway failed on this request; it is logged under request id ${req.id}`));
  });

  // Order matters: limit first (cheap refusal), then idempotency (needs the parsed body), meter last.
  registerRateLimits(app, deps);
  registerScopeCheck(app, deps);
  registerIdempotency(app, deps);
  const meter = new Meter(deps.kv, deps.log);
  registerMeter(app, deps, meter);
  registerKeyChangeNotices(app, deps);

  await app.register(async (scope) => capabilityRoutes(scope, deps));
  await app.register(async (scope) => keyRoutes(scope, deps));
  await app.register(async (scope) => mcpRoutes(scope, deps));
  await app.register(async (scope) => keysMeRoute(scope, deps, meter));
  await app.register(async (scope) => pricingRoutes(scope));
  await app.register(async (scope) => moneyRoutes(scope, deps));
  await app.register(async (scope) => dealRoutes(scope, deps));
  // Keyless faces and discovery. Keep doors and the record last: they skip any path already taken.
  await app.register(async (scope) => decodeRoutes(scope, deps));
  await app.register(async (scope) => catalogRoutes(scope, deps));
  await app.register(async (scope) => suiteRoutes(scope, deps));
  await app.register(async (scope) => documentRoutes(scope, deps));
  await app.register(async (scope) => doorRoutes(scope, deps));
  await app.register(async (scope) => recordRoutes(scope, deps));
  return app;
}
