/**
 * What an on-call reads first, asked of the running service (embedded: the one process's /metrics) paid on the local
 * x402 rail: the gateway's request-duration histogram by route template, method and status; commerce's payment
 * outcomes, each payment counted once; the facilitator's latency by operation and outcome; a paid request's log line;
 * and the Grafana dashboard (deploy/grafana/vcs-dashboard.json), every panel of which must query only metrics the
 * scrape contains.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { createPayment, payingFetch, receiptOf, startRail, type Rail } from '@vcs/x402-rail';
import { call, mintKey, waitFor } from './support/harness.ts';
import { railSettings, startMoneyHarness, type MoneyHarness } from './support/money.ts';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.ts';
import { anvilControl } from './support/anvil.ts';

const VIN = '1HGCM82633A004352';
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const dashboard = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'deploy', 'grafana', 'vcs-dashboard.json'), 'utf8'),
);

/** One sample of a Prometheus text scrape: its name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}
/** The sum of a metric's samples whose labels include `labels` (0 when there is none). */
const valueOf = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

/** The metric names a PromQL expression selects (Grafana's range variables read as a plain range); throws if it does not parse. */
function metricNamesOf(expr: string): string[] {
  const promql = expr.replace(/\$__(rate_interval|interval|range)/g, '5m');
  const names: string[] = [];
  let broken = false;
  parser.parse(promql).iterate({
    enter(n) {
      if (n.type.isError) broken = true;
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') names.push(promql.slice(n.from, n.to));
    },
  });
  if (broken) throw new Error(`not PromQL: ${expr}`);
  return names;
}
/** Every panel of the dashboard (those in rows too) that queries something, with its expressions. */
const panelsOf = (d: { panels?: any[] }): { title: string; exprs: string[] }[] =>
  (d.panels ?? []).flatMap((p) => [
    ...(p.targets ? [{ title: p.title, exprs: p.targets.map((t: { expr: string }) => t.expr) }] : []),
    ...panelsOf(p),
  ]);
/** The metrics a dashboard's panels query that `scraped` does not hold, as `panel: metric`. */
const missingFrom = (d: { panels?: any[] }, scraped: Set<string>) =>
  panelsOf(d).flatMap((p) =>
    p.exprs.flatMap(metricNamesOf).flatMap((name) => (scraped.has(name) ? [] : [`${p.title}: ${name}`])),
  );

describe('what an on-call reads first (embedded, paid on a local chain)', () => {
  let rail: Rail;
  let proxy: FaultProxy;
  let m: MoneyHarness;
  let base: string;
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  beforeAll(async () => {
    rail = await startRail({ payers: 4 });
    proxy = await startFaultProxy({ target: rail.facilitatorUrl, rpcUrl: rail.rpcUrl });
    m = await startMoneyHarness(
      'embedded',
      {
        ...railSettings(rail),
        X402_FACILITATOR_URL: proxy.url, // the rail's facilitator, behind the fault proxy
        X402_FACILITATOR_TIMEOUT_MS: '4000', // a settle sent again once its lease (this and a margin) runs out
        X402_PAYMENT_HOLD_MS: '0', // a payment in doubt is answered 503 at once; the reconciler finishes it
      },
      { log: createLogger('test', 'info', sink) },
    );
    base = m.h.baseUrl;
  }, 180_000);
  afterAll(async () => {
    await m?.stop();
    await proxy?.close();
    await rail?.stop();
  });

  const scrape = async () => {
    const r = await fetch(`${base}/metrics`);
    expect(r.status).toBe(200);
    return parseScrape(await r.text());
  };
  type Series = [name: string, labels: Record<string, string>];
  /** How much each series (its samples with those labels, summed) moved since the scrape `before`. */
  async function since(before: Sample[], ...series: Series[]) {
    const now = await scrape();
    return series.map(([name, labels]) => valueOf(now, name, labels) - valueOf(before, name, labels));
  }
  /** How much each series moved while `act` ran. */
  async function moved(act: () => Promise<void>, ...series: Series[]) {
    const before = await scrape();
    await act();
    return since(before, ...series);
  }
  const payments = (outcome: string): Series => ['vcs_payments_total', { outcome }];
  const facilitator = (operation: string, outcome: string): Series => [
    'vcs_facilitator_request_duration_seconds_count',
    { operation, outcome },
  ];
  const requests = (route: string, method: string, status: number): Series => [
    'http_server_request_duration_seconds_count',
    { http_route: route, http_request_method: method, http_response_status_code: String(status) },
  ];
  const lineOf = (reqId: string | null) => lines.find((l) => l.msg === 'request' && l.reqId === reqId);
  const stock =
    (payer: number) =>
    (path: string, headers: Record<string, string> = {}) =>
      payingFetch(rail.payerKeys[payer]!)(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ vin: VIN }),
      });

  it('exports every payment outcome from the start', async () => {
    // Present before any payment (a series prom-client made at start). Not asserted at 0: test files share a worker's
    // process (isolate: false), so the registry may hold another file's payments.
    const outcomes = (await scrape()).filter((s) => s.name === 'vcs_payments_total');
    expect(outcomes.map((s) => s.labels.outcome).sort()).toEqual([
      'expired',
      'pending',
      'refused',
      'settled',
      'voided',
    ]);
  });

  it('a paid call: settled once, verify and settle timed ok, its route timed by template, its log line names the payment', async () => {
    let res!: Response;
    const delta = await moved(
      async () => {
        res = await stock(0)('/signings/quote');
        expect(res.status, await res.clone().text()).toBe(200);
      },
      payments('settled'),
      payments('voided'),
      payments('refused'),
      payments('pending'),
      facilitator('verify', 'ok'),
      facilitator('settle', 'ok'),
      requests('/signings/quote', 'POST', 402),
      requests('/signings/quote', 'POST', 200),
    );
    expect(delta).toEqual([1, 0, 0, 0, 1, 1, 1, 1]);
    const receipt = receiptOf(res)!;
    await waitFor(async () => !!lineOf(res.headers.get('x-request-id')), 5_000);
    expect(lineOf(res.headers.get('x-request-id'))).toMatchObject({
      route: 'signing.quote',
      status: 200,
      intentId: res.headers.get('intent-id'),
      payer: rail.payerAddresses[0],
      paymentStatus: 'settled',
      transaction: receipt.transaction,
    });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('a paid call whose capability fails (BLOCKED): voided once, never sent to settle, logged voided', async () => {
    let res!: Response;
    const delta = await moved(
      async () => {
        res = await stock(1)('/signings/pay', { 'sandbox-trigger': 'fail' });
        expect(((await res.clone().json()) as any).value.code).toBe('payment-failed');
      },
      payments('voided'),
      payments('settled'),
      facilitator('verify', 'ok'),
      ['vcs_facilitator_request_duration_seconds_count', { operation: 'settle' }],
    );
    expect(delta).toEqual([1, 0, 1, 0]);
    await waitFor(async () => !!lineOf(res.headers.get('x-request-id')), 5_000);
    expect(lineOf(res.headers.get('x-request-id'))).toMatchObject({
      intentId: res.headers.get('intent-id'),
      payer: rail.payerAddresses[1],
      paymentStatus: 'voided',
      transaction: null,
    });
  });

  it("a payment from an empty wallet: refused once, by the facilitator's verify", async () => {
    const offer = await call(base, 'POST', '/signings/quote', { body: { vin: VIN } });
    const required = unb64(offer.headers.get('payment-required')!);
    const key = `0x${randomBytes(32).toString('hex')}` as const;
    const payment = await createPayment(key, required.accepts[0], required.resource);
    let r!: Awaited<ReturnType<typeof call>>;
    const delta = await moved(
      async () => {
        r = await call(base, 'POST', '/signings/quote', {
          body: { vin: VIN },
          headers: { 'payment-signature': b64(payment) },
        });
        expect(r.json.value.code, r.text).toBe('payment-insufficient-funds');
      },
      payments('refused'),
      facilitator('verify', 'refused'),
      facilitator('verify', 'ok'),
    );
    expect(delta).toEqual([1, 1, 0]);
    await waitFor(async () => !!lineOf(r.headers.get('x-request-id')), 5_000);
    expect(lineOf(r.headers.get('x-request-id'))).toMatchObject({
      status: 402,
      intentId: offer.json.value.intent.id,
      payer: (payment as any).payload.authorization.from,
      paymentStatus: 'refused',
      transaction: null,
    });
  });

  it('a settle the facilitator fails (500): pending once, settle timed as an error, settled once when sent again', async () => {
    const before = await scrape();
    const failed = proxy.next({ kind: 'fail' });
    const res = await stock(2)('/signings/quote');
    expect(res.status, await res.clone().text()).toBe(503);
    await failed;
    expect(await since(before, payments('pending'), facilitator('settle', 'error'), payments('settled'))).toEqual([
      1, 1, 0,
    ]);
    await waitFor(async () => !!lineOf(res.headers.get('x-request-id')), 5_000);
    expect(lineOf(res.headers.get('x-request-id'))).toMatchObject({
      status: 503,
      intentId: res.headers.get('intent-id'),
      paymentStatus: 'pending',
      transaction: null,
    });
    // The reconciler sends it again once its lease runs out; the chain proves it: settled, still pending once.
    await waitFor(async () => (await since(before, payments('settled')))[0] === 1, 30_000, 250);
    expect(await since(before, payments('pending'), payments('settled'), facilitator('settle', 'ok'))).toEqual([
      1, 1, 1,
    ]);
  }, 60_000);

  it('a payment whose first settle failed and that the chain passed unused: pending, then expired once, never settled', async () => {
    const before = await scrape();
    const failed = proxy.next({ kind: 'fail' });
    let header = '';
    const recording: typeof fetch = async (input, init) => {
      const r = new Request(input, init);
      header = r.headers.get('payment-signature') ?? header;
      return fetch(r);
    };
    const res = await payingFetch(rail.payerKeys[3]!, { fetch: recording })(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: VIN }),
    });
    expect(res.status, await res.clone().text()).toBe(503);
    await failed;
    // A block stamped past validBefore, the transfer never sent: the reconciler's next pass reads it from the chain.
    const validBefore = Number(unb64(header).payload.authorization.validBefore);
    const chain = anvilControl(rail.rpcUrl);
    await chain.mine(Math.max(validBefore + 1, (await chain.latestTimestamp()) + 1));
    await waitFor(async () => (await since(before, payments('expired')))[0] === 1, 30_000, 250);
    expect(await since(before, payments('pending'), payments('expired'), payments('settled'))).toEqual([1, 1, 0]);
    const intent = await call(base, 'GET', `/intents/${res.headers.get('intent-id')}`);
    expect(intent.json.value.payment).toMatchObject({ status: 'expired' });
  }, 60_000);

  it('labels a route by its template, never the path sent; a path no route serves is unmatched', async () => {
    const { key } = await mintKey(base);
    const intentId = (await call(base, 'POST', '/signings/quote', { body: { vin: VIN } })).json.value.intent.id;
    const delta = await moved(
      async () => {
        expect((await call(base, 'GET', `/intents/${intentId}`)).status).toBe(200);
        expect((await call(base, 'GET', `/signings/status?vin=${VIN}`, { key })).status).toBe(200);
        expect((await call(base, 'GET', `/no/such/${intentId}`)).status).toBe(404);
      },
      requests('/intents/:intentId', 'GET', 200),
      requests('/signings/status', 'GET', 200),
      requests('unmatched', 'GET', 404),
    );
    expect(delta).toEqual([1, 1, 1]);
    const routes = new Set(
      (await scrape()).filter((s) => s.name.startsWith('http_server_request_duration')).map((s) => s.labels.http_route),
    );
    for (const route of routes) expect(route).toMatch(/^(unmatched|\/[^?]*)$/);
    expect([...routes].filter((r) => r?.includes('pi_'))).toEqual([]);
    // OpenTelemetry's boundaries, in seconds.
    const buckets = (await scrape())
      .filter(
        // One series: the registry is the worker's, shared with other files' requests to the same route.
        (s) =>
          s.name === 'http_server_request_duration_seconds_bucket' &&
          s.labels.http_route === '/intents/:intentId' &&
          s.labels.http_request_method === 'GET' &&
          s.labels.http_response_status_code === '200',
      )
      .map((s) => s.labels.le);
    expect(buckets).toEqual([
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.075',
      '0.1',
      '0.25',
      '0.5',
      '0.75',
      '1',
      '2.5',
      '5',
      '7.5',
      '10',
      '+Inf',
    ]);
  });

  it("every panel of the Grafana dashboard queries only metrics this service's scrape contains", async () => {
    const scraped = new Set((await scrape()).map((s) => s.name));
    const panels = panelsOf(dashboard);
    expect(panels.length).toBeGreaterThan(0);
    for (const p of panels) expect(p.exprs.flatMap(metricNamesOf), p.title).not.toEqual([]);
    expect(missingFrom(dashboard, scraped)).toEqual([]);
    // The check sees a panel querying a metric nobody exports, and a query that is not PromQL.
    const wrong = {
      panels: [{ title: 'typo', targets: [{ expr: 'sum(rate(vcs_payment_total[$__rate_interval]))' }] }],
    };
    expect(missingFrom(wrong, scraped)).toEqual(['typo: vcs_payment_total']);
    expect(() => metricNamesOf('sum(rate(vcs_payments_total[5m])')).toThrow(/not PromQL/);
  });
});
