import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  ROOT_CONTEXT,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { Headers } from './bus/types.ts';

/**
 * Tracing (W3C trace context, OpenTelemetry), owned here: started with the process when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set, and otherwise nothing at all. Off, no SDK is loaded or registered and every helper below returns at its
 * first line on `tracing.on` (no span, no carrier object, no header): the hot path pays one property read.
 *
 * What travels: `traceparent` in the headers of each bus request (bus/call.ts → bus/serve.ts), in the outbox row
 * of each event the call wrote (events/outbox.ts), as a header of the event's JetStream message (the relay), in
 * the webhook event row its fan-out stores, on the webhook POST, and into the deal step an event moves.
 */
export const tracing = { on: false };

export interface TracingSettings {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_SERVICE_NAME?: string;
}

let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;
const tracer = () => trace.getTracer('vcs');

/**
 * Start the SDK when an OTLP endpoint is set: spans batched (1 s) to `<endpoint>/v1/traces` as OTLP/HTTP JSON,
 * named by OTEL_SERVICE_NAME or `serviceName`. Returns whether tracing is on. Loaded by import() so a process
 * without the setting never loads the SDK.
 */
export async function startTracing(serviceName: string, settings: TracingSettings): Promise<boolean> {
  const endpoint = settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || tracing.on) return tracing.on;
  // These are CommonJS packages: bundled (deploy/build.ts), import() gives their exports as `default`.
  const named = <M>(m: M): M => (m as { default?: M }).default ?? m;
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { W3CTraceContextPropagator },
    { AsyncLocalStorageContextManager },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base').then(named),
    import('@opentelemetry/exporter-trace-otlp-http').then(named),
    import('@opentelemetry/core').then(named),
    import('@opentelemetry/context-async-hooks').then(named),
    import('@opentelemetry/resources').then(named),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.OTEL_SERVICE_NAME || serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })],
  });
  trace.setGlobalTracerProvider(p);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  provider = p;
  tracing.on = true;
  return true;
}

/** Export what is left and stop (the last step of a shutdown). */
export async function stopTracing(): Promise<void> {
  const p = provider;
  if (!p) return;
  provider = undefined;
  tracing.on = false;
  await p.shutdown().catch(() => undefined);
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Send spans now (tests, before asking the collector). */
export const flushTracing = async () => {
  await provider?.forceFlush();
};

/** The `traceparent` of a context (the active one by default), or undefined. */
export function traceparentOf(ctx?: Context): string | undefined {
  if (!tracing.on) return undefined;
  const carrier: Headers = {};
  propagation.inject(ctx ?? context.active(), carrier);
  return carrier.traceparent;
}

/** The `traceparent` that makes `span` the parent. */
export const spanTraceparent = (span: Span) => traceparentOf(trace.setSpan(ROOT_CONTEXT, span));

/**
 * The context a `traceparent` continues; none is a new trace (never the active context: a consumer woken inside
 * some unrelated request must not join that request's trace).
 */
export function contextFrom(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** The context in which `span` is the active span (its parent's context by default: the active one). */
export const contextWith = (span: Span, parent: Context = context.active()): Context => trace.setSpan(parent, span);
/** Call `fn` with `ctx` active: what it starts, synchronously or by awaiting, runs in `ctx`. */
export const runIn = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);

/** A span started as a child of the active context (or of `parent`); undefined while tracing is off. */
export function startSpan(name: string, kind: SpanKind, attributes?: Attributes, parent?: Context): Span | undefined {
  if (!tracing.on) return undefined;
  return tracer().startSpan(name, { kind, attributes }, parent ?? context.active());
}

/** End a span, marking it failed when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes) {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined)
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

/**
 * A bus request's span (CLIENT) and the headers that carry it, or undefined while tracing is off: bus/call.ts
 * then sends no headers at all.
 */
export function requestSpan(subject: string): { span: Span; headers: Headers } | undefined {
  if (!tracing.on) return undefined;
  const span = tracer().startSpan(subject, {
    kind: SpanKind.CLIENT,
    attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
  });
  const headers: Headers = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return { span, headers };
}

/**
 * Run `fn` in a span continuing `traceparent` (a served request, a consumed event, a delivery): everything it
 * calls, writes or publishes carries this span. While tracing is off it is just `fn()`.
 */
export function inSpan<T>(
  name: string,
  kind: SpanKind,
  traceparent: string | null | undefined,
  attributes: Attributes | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracing.on) return fn();
  const span = tracer().startSpan(name, { kind, attributes }, contextFrom(traceparent));
  return context.with(trace.setSpan(context.active(), span), fn).then(
    (r) => {
      span.end();
      return r;
    },
    (err) => {
      endSpan(span, err);
      throw err;
    },
  );
}

export { SpanKind, SpanStatusCode, type Context, type Span };
