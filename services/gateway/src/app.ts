import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import cors from '@fastify/cors';
import { blocked, idSequence, type BlockedCode } from '@vcs/contract';
import { isStoreUnavailable, storeUnavailableMessage, type Logger } from '@vcs/platform';
import { opRoutes } from './routes/ops.ts';
import type { GatewayDeps, GatewayGiven } from './deps.ts';
import { capabilityLabel, countAnswer, observeDuration } from './metrics.ts';
import { CATALOG, sameRequest, sendAnswer, sendBlocked } from './reply.ts';
import { capabilityRoutes } from './routes/capabilities.ts';
import { healthRoutes } from './routes/health.ts';
import { decodeRoutes } from './routes/decode.ts';
import { newDecodeCache } from './decode.ts';
import { closeUnusedConnections } from './shutdown.ts';
import { catalogRoutes } from './routes/discovery/catalog.ts';
import { documentRoutes } from './routes/discovery/documents.ts';
import { referenceRoutes } from './routes/discovery/reference.ts';
import { suiteRoutes } from './routes/discovery/suite.ts';
import { doorRoutes } from './routes/doors.ts';
import { recordRoutes } from './routes/record.ts';
import { pricingRoutes } from './routes/pricing.ts';
import { faviconRoutes } from './routes/favicon.ts';
import { keysMeRoute } from './routes/keysMe.ts';
import { registerIdempotency } from './idempotency.ts';
import { KeyCache, registerKeyChangeNotices } from './keyCache.ts';
import { registerCaller } from './auth.ts';
import { traceRequests } from './tracing.ts';
import { Meter, registerMeter } from './meter.ts';
import { registerRateLimits } from './rateLimit.ts';
import { registerScopeCheck } from './scopes.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { registerAllowedMethods, sendMethodNotAllowed } from './methods.ts';

/**
 * Input limits (docs/operations.md). bodyBytes is the default of BODY_LIMIT_BYTES; headerBytes bounds the
 * request line plus all headers (Node's parser, so a huge query string counts here too); paramLength bounds
 * one path parameter; jsonDepth bounds nesting of a JSON body.
 */
/** Request limits; `bodyBytes` is the default of BODY_LIMIT_BYTES. */
export const LIMITS = { bodyBytes: 1_048_576, jsonDepth: 32, headerBytes: 16_384, paramLength: 200 };

/**
 * Requests Node's HTTP parser refuses never reach fastify (oversize headers, NUL bytes, broken framing):
 * answer them with the same typed envelope instead of Node's bare status line.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message]: [number, BlockedCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'headers-too-large',
          `the request line and headers exceed ${LIMITS.headerBytes} bytes; ` +
            'send a shorter query string or fewer headers',
        ]
      : err.code === 'HPE_URI_TOO_LONG'
        ? [414, 'uri-too-long', 'the URL is too long']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408 as number, 'invalid-input', 'the request took too long to arrive']
          : [
              400,
              'invalid-input',
              `the HTTP request could not be parsed (${err.code ?? 'bad request'}); ` +
                'check the request line, header names and values',
            ];
  const body = JSON.stringify(blocked(code, message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nx-answer-kind: BLOCKED\r\nconnection: close\r\n\r\n${body}`,
  );
}

function depthOf(v: unknown, d = 0): number {
  if (d > LIMITS.jsonDepth) return d;
  if (v && typeof v === 'object') {
    let max = d + 1;
    for (const x of Object.values(v)) max = Math.max(max, depthOf(x, d + 1));
    return max;
  }
  return d;
}

/**
 * One log line per request, at its end (info; error when the response failed): request id (the child logger's
 * reqId), method, route (the capability's name, else the route), status, duration and the replica that served it;
 * a paid request's also its intent, payer, payment status and transaction (money/paymentLog.ts).
 * Fastify's default is a line when a request comes in and another when it completes.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest() {}
  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply) {
    const line = {
      method: req.method,
      route: capabilityLabel(req),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      servedBy: reply.getHeader('x-served-by'),
      ...req.paidCall?.log,
    };
    if (error) req.log.error({ ...line, err: error.message }, 'request failed');
    else req.log.info(line, 'request');
  }
}

/** Build the gateway: every route derived from the catalog, every failure a typed envelope. */
export async function buildApp(given: GatewayGiven): Promise<FastifyInstance> {
  const deps: GatewayDeps = { ...given, decodes: newDecodeCache() };
  // Fastify's own logger type (pino's, less what the gateway never asks of it), so the instance is a plain FastifyInstance.
  const loggerInstance: FastifyBaseLogger = deps.log;
  const routerOptions = { maxParamLength: LIMITS.paramLength, ignoreTrailingSlash: true };
  const app = Fastify({
    loggerInstance,
    bodyLimit: deps.config.bodyLimitBytes,
    // A hop count trusts that many proxies nearest the server (fastify's types take it as a function).
    trustProxy:
      typeof deps.config.trustProxy === 'number'
        ? (
            (n) => (_addr: string, hop: number) =>
              hop < n
          )(deps.config.trustProxy)
        : (deps.config.trustProxy ?? false),
    requestIdHeader: 'x-request-id',
    genReqId: idSequence('request'),
    // A child logger per request costs a few µs; build it only when request lines are logged (info or finer).
    // Errors logged without it name the request id themselves.
    childLoggerFactory: (logger, bindings, opts) =>
      (logger as unknown as Logger).isLevelEnabled('info') ? logger.child(bindings, opts) : logger,
    routerOptions,
    http: { maxHeaderSize: LIMITS.headerBytes },
    clientErrorHandler,
    // A URL fastify cannot decode (e.g. `%ff`) fails before routing: answer it typed too. A path segment longer
    // than any id, VIN or name we serve names nothing: 404, as docs/operations.md's limits table says.
    frameworkErrors: (err, _req, reply) => {
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
        void sendBlocked(
          reply,
          'not-found',
          `no route for a path segment over ${LIMITS.paramLength} characters; the catalog of routes is at GET /catalog`,
        );
      else
        void sendBlocked(
          reply,
          'invalid-input',
          `the URL could not be decoded (${err.code}); percent-encode it as UTF-8`,
        );
    },
    // Fastify's own 503-on-closing answer is untyped; requests that arrive while closing are served instead
    // (the bus is drained only after the server has closed), so an accepted request is never dropped.
    return503OnClosing: false,
    // Fastify's two lines per request (incoming, completed) become one (OneLinePerRequest).
    logController: new OneLinePerRequest(),
  });
  registerAllowedMethods(app, routerOptions);

  // JSON bodies: an empty body means "no input" ({}); bodies nested deeper than the limit are refused.
  // Browsers may call the API from any origin: keys travel in headers, never cookies, so `*` grants nothing extra.
  // (POST /mcp keeps its own Host/Origin check against DNS rebinding.)
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'HEAD', 'OPTIONS'],
    allowedHeaders: [
      'authorization',
      'x-api-key',
      'content-type',
      'accept',
      'idempotency-key',
      'sandbox-trigger',
      'accept-price',
      'mandate',
      'delegated-for',
      'x-request-id',
      'if-none-match',
      'mcp-protocol-version',
      'mcp-method',
      'mcp-name',
    ],
    exposedHeaders: [
      'x-request-id',
      'payment-required',
      'payment-response',
      'x-payment-response',
      'intent-id',
      'idempotent-replayed',
      'retry-after',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'ratelimit-policy',
      'x-answer-kind',
      'x-served-by',
      'etag',
      'warning',
    ],
    maxAge: 600,
    strictPreflight: false, // a bare OPTIONS (no Origin) is answered, not refused with an untyped text body
  });
  // Only JSON bodies: anything else is a typed 415, not a string the schemas then refuse.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (!text.trim()) return done(null, {});
    try {
      const parsed = JSON.parse(text, (k, v) => (k === '__proto__' ? undefined : v));
      if (depthOf(parsed) > LIMITS.jsonDepth)
        return done(
          Object.assign(new Error(`JSON nested deeper than ${LIMITS.jsonDepth} levels`), {
            statusCode: 400,
            code: 'VCS_JSON_DEPTH',
          }),
          undefined,
        );
      done(null, parsed);
    } catch (e) {
      done(
        Object.assign(new Error(`malformed JSON: ${(e as Error).message}`), {
          statusCode: 400,
          code: 'FST_ERR_CTP_INVALID_JSON',
        }),
        undefined,
      );
    }
  });

  // First, so the key check and everything after run in the request's trace (only when tracing is on).
  traceRequests(app);
  // Callback-style hooks where nothing is awaited: no promise per request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // Every 503 says when to ask again, the gateway's own (a pillar or a store not answering) included.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (reply.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const kind = reply.getHeader('x-answer-kind');
    countAnswer(
      capabilityLabel(req),
      typeof kind === 'string' ? kind : reply.statusCode >= 400 ? 'BLOCKED' : 'OK',
      reply.statusCode,
    );
    observeDuration(req, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  // A known path under a wrong method is 405 with Allow; a path no route serves is 404.
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allow = app.allowedMethods(req.method, path);
    if (allow.length) return sendMethodNotAllowed(reply, req, path, allow);
    return sendBlocked(reply, 'not-found', `no route ${req.method} ${path}; the catalog of routes is at GET /catalog`, {
      next: CATALOG,
    });
  });

  app.setErrorHandler((err: any, req, reply) => {
    const status = err.statusCode ?? 500;
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413)
      return sendBlocked(reply, 'payload-too-large', `the body is larger than ${deps.config.bodyLimitBytes} bytes`);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415)
      return sendBlocked(reply, 'unsupported-media-type', 'send the body as application/json');
    if (err.code === 'FST_ERR_CTP_INVALID_JSON' || err.code === 'VCS_JSON_DEPTH' || err instanceof SyntaxError)
      return sendBlocked(reply, 'malformed-json', err.message);
    if (status >= 400 && status < 500) return sendBlocked(reply, 'invalid-input', err.message);
    const storeDown = isStoreUnavailable(err);
    if (storeDown) req.log.warn({ reqId: req.id, err: err.message }, 'store unavailable');
    else req.log.error({ reqId: req.id, err }, 'unhandled error');
    if (storeDown)
      return sendBlocked(reply, 'store-unavailable', storeUnavailableMessage(err, 'a store this call needs'), {
        next: sameRequest(req),
      });
    return sendAnswer(
      reply,
      blocked('internal', `the gateway failed on this request; it is logged under request id ${req.id}`),
    );
  });

  // Order matters: who is calling first (once, req.caller), then the limit (cheap refusal), then idempotency (needs
  // the parsed body), meter last. The key cache is this app's own, as is every other piece of request state.
  closeUnusedConnections(app);
  const keys = new KeyCache(deps.bus);
  registerCaller(app, deps, keys);
  registerRateLimits(app, deps);
  registerScopeCheck(app, deps);
  registerIdempotency(app, deps);
  const meter = new Meter(deps.kv, deps.log);
  registerMeter(app, deps, meter);
  registerKeyChangeNotices(app, keys);

  await app.register(async (scope) => healthRoutes(scope, deps));
  await app.register(async (scope) => capabilityRoutes(scope, deps));
  await app.register(async (scope) => opRoutes(scope, deps));
  await app.register(async (scope) => mcpRoutes(scope, deps));
  await app.register(async (scope) => keysMeRoute(scope, deps, meter));
  await app.register(async (scope) => pricingRoutes(scope));
  // Keyless faces and discovery. Keep doors and the record last: they skip any path already taken.
  await app.register(async (scope) => decodeRoutes(scope, deps));
  await app.register(async (scope) => catalogRoutes(scope, deps));
  await app.register(async (scope) => suiteRoutes(scope, deps));
  await app.register(async (scope) => documentRoutes(scope, deps));
  await app.register(async (scope) => referenceRoutes(scope));
  await app.register(async (scope) => faviconRoutes(scope));
  await app.register(async (scope) => doorRoutes(scope, deps));
  await app.register(async (scope) => recordRoutes(scope, deps));
  return app;
}
