import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  contextFrom,
  contextWith,
  endSpan,
  runIn,
  SpanKind,
  startSpan,
  tracing,
  type Context,
  type Span,
} from '@vcs/platform';

const traced = Symbol('trace');
type Traced = FastifyRequest & { [traced]?: { span: Span; ctx: Context } };

/**
 * Each HTTP request a SERVER span (continuing a caller's `traceparent` header, if it sent one), made the active
 * context of every hook and the handler, so the bus calls they make carry it (libs/platform tracing.ts). With
 * tracing off no hook is added: the gateway's hot path is as it was.
 */
export function traceRequests(app: FastifyInstance) {
  if (!tracing.on) return;
  // Each stage runs inside the request's context: body parsing (stream events) would otherwise lose it.
  const within = (req: FastifyRequest, _reply: unknown, done: () => void) => {
    const t = (req as Traced)[traced];
    if (t) runIn(t.ctx, done);
    else done();
  };
  app.addHook('onRequest', (req, _reply, done) => {
    const given = req.headers.traceparent;
    const parent = contextFrom(typeof given === 'string' ? given : undefined);
    const route = req.routeOptions.url ?? 'unknown';
    const span = startSpan(
      `${req.method} ${route}`,
      SpanKind.SERVER,
      {
        'http.request.method': req.method,
        'http.route': route,
        'url.path': req.url.split('?')[0],
        'vcs.request_id': req.id,
      },
      parent,
    )!;
    const ctx = contextWith(span, parent);
    (req as Traced)[traced] = { span, ctx };
    runIn(ctx, done);
  });
  app.addHook('preValidation', within);
  app.addHook('preHandler', within);
  app.addHook('onResponse', (req, reply, done) => {
    const t = (req as Traced)[traced];
    const kind = reply.getHeader('x-answer-kind');
    if (t)
      endSpan(t.span, reply.statusCode >= 500 ? `HTTP ${reply.statusCode}` : undefined, {
        'http.response.status_code': reply.statusCode,
        ...(typeof kind === 'string' ? { 'vcs.answer': kind } : {}),
      });
    done();
  });
}
