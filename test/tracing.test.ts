/**
 * One trace covers a keyed POST /webhooks/emit from the HTTP request to the webhook delivery:
 * gateway → commerce (the offer settled) → services pillar (the capability) → the event's publish → its fan-out →
 * the delivery, exported over OTLP/HTTP JSON to a collector of our own on 127.0.0.1. The caller's `traceparent`
 * is continued, and the receiver gets the delivery's.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, stopTracing } from '@vcs/platform';
import { call as rawCall, mintKey, modes, startHarness, waitFor, type Harness } from './support/harness.ts';
import { startReceiver } from './support/receiver.ts';

const call: typeof rawCall = (base, method, path, opts = {}) =>
  rawCall(
    base,
    method,
    path,
    method === 'POST' ? { ...opts, headers: { 'accept-price': '1000.00 USD', ...(opts.headers ?? {}) } } : opts,
  );

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_POLL_MS = '50';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}

/** An OTLP/HTTP collector: POST /v1/traces with a JSON ExportTraceServiceRequest; keeps every span with its service. */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && /json/.test(String(req.headers['content-type']))) {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const service =
            rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '?';
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                service,
              });
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      } else {
        res.writeHead(415);
        res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as any).port}`,
    spans,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const hex = (n: number) =>
  [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe.each(modes())('tracing (%s)', (mode) => {
  let h: Harness;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  beforeAll(async () => {
    collector = await startCollector();
    // Distributed: every process gets the endpoint in its environment, as an operator sets it. Embedded: this process.
    if (mode === 'embedded') await startTracing('vcs-embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint });
    h = await startHarness(mode, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint } });
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
    if (mode === 'embedded') await stopTracing();
    await collector?.close();
  });

  it('one trace covers gateway → pillar → event → webhook delivery for a keyed POST /webhooks/emit', async () => {
    const rx = await startReceiver();
    try {
      const { key } = await mintKey(h.baseUrl);
      const reg = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: rx.url } });
      expect(reg.status).toBe(200);
      const endpointId = reg.json.value.registration.id as string;
      const traceId = hex(16);
      const emit = await call(h.baseUrl, 'POST', '/webhooks/emit', {
        key,
        body: { endpointId },
        headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
      });
      expect(emit.status).toBe(200);
      await h.settled();
      const delivery = rx.received.find((r) => JSON.parse(r.body).type === 'Webhook.emitted@1')!;
      // The receiver can continue the trace: the delivery's traceparent is in it.
      expect(String(delivery.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

      const names = () => collector.spans.filter((s) => s.traceId === traceId).map((s) => s.name);
      // Every span's parent is in the trace but the root's (its parent is the caller's own span, not exported).
      const orphansOf = (spans: OtlpSpan[]) => {
        const ids = new Set(spans.map((s) => s.spanId));
        return spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId)).map((s) => s.name);
      };
      // Each process exports its spans in its own batches (1 s): wait for the delivery's, then for every parent.
      await waitFor(async () => names().some((n) => n.startsWith('webhook deliver')), 20_000);
      await waitFor(
        async () => orphansOf(collector.spans.filter((s) => s.traceId === traceId)).length === 1,
        10_000,
      ).catch(() => undefined);
      const trace = collector.spans.filter((s) => s.traceId === traceId);
      const has = (name: string | RegExp, service?: RegExp) =>
        trace.some(
          (s) =>
            (typeof name === 'string' ? s.name === name : name.test(s.name)) && (!service || service.test(s.service)),
        );
      expect(has('POST /webhooks/emit', /gateway|embedded/), names().join(', ')).toBe(true); // the HTTP request
      expect(has(/^cap\.services\.webhook\.emit$|\.webhook\.emit$/, /services|embedded/), names().join(', ')).toBe(
        true,
      ); // the pillar served it
      expect(has(/^publish evt\./), names().join(', ')).toBe(true); // the outbox row's event
      expect(has('fanout Webhook.emitted@1', /services|embedded/), names().join(', ')).toBe(true); // consumed
      expect(has('webhook deliver Webhook.emitted@1', /services|embedded/), names().join(', ')).toBe(true); // delivered
      if (process.env.TRACE_PRINT)
        console.log(trace.map((s) => `${s.service} ${s.name} ${s.spanId} <- ${s.parentSpanId}`).join('\n'));
      // One connected trace, rooted at the HTTP request.
      expect(orphansOf(trace)).toEqual(['POST /webhooks/emit']);
      // Distributed, the trace crosses processes: the gateway's and the services pillar's spans at least.
      if (mode === 'distributed')
        expect([...new Set(trace.map((s) => s.service))].sort().join(' ')).toMatch(
          /gateway.*services|services.*gateway/,
        );
    } finally {
      await rx.close();
    }
  }, 60_000);
});
