import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClient, deal, signing, TransportError } from '@vcs/sdk';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

async function connect(baseUrl: string, key?: string) {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}
const textOf = (r: any) => r.content[0].text as string;
const jsonOf = (r: any) => JSON.parse(textOf(r));

describe.each(modes())('SDK and MCP at POST /mcp (%s)', (mode) => {
  let h: Harness;
  let client: Client;
  let key: string;
  beforeAll(async () => {
    h = await startHarness(mode);
    key = (await mintKey(h.baseUrl)).key;
    client = await connect(h.baseUrl, key);
  });
  afterAll(async () => {
    await client?.close();
    await h?.stop();
  });

  const exec = (code: string) => client.callTool({ name: 'exec', arguments: { code } });

  it('initializes and lists the three tools', async () => {
    expect(client.getServerVersion()?.name).toBe('vehicle-capability-service');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['exec', 'fetch', 'search']);
  });

  it('search ranks capabilities in the connector shape', async () => {
    const out = jsonOf(await client.callTool({ name: 'search', arguments: { query: 'signing status' } }));
    expect(out.results[0]).toMatchObject({
      id: 'signing.status',
      title: expect.any(String),
      url: `${h.baseUrl}/catalog/signing#status`,
    });
    expect(out.results[0].text).toMatch(
      /`GET \/signings\/status` · gate none · query: vin\?: string · answers SigningStatus@1 · free/,
    );
    // The link resolves: the page exists and holds the anchor.
    const [page, anchor] = out.results[0].url.split('#');
    const html = await (await fetch(page, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain(`id="${anchor}"`);
  });

  it('fetch returns a descriptor by wire name and a record by VIN', async () => {
    const d = jsonOf(await client.callTool({ name: 'fetch', arguments: { id: 'signing.quote' } }));
    expect(d).toMatchObject({ id: 'signing.quote', metadata: { gate: 'offer', path: '/signings/quote' } });
    const v = jsonOf(await client.callTool({ name: 'fetch', arguments: { id: VIN } }));
    expect(v).toMatchObject({ id: VIN, url: expect.stringContaining(VIN) });
    expect(v.text).toContain(VIN);
    const bad = await client.callTool({ name: 'fetch', arguments: { id: 'nope' } });
    expect(bad.isError).toBe(true);
  });

  it('exec runs TypeScript against the pinned SDK with the caller key', async () => {
    const r = await exec(`import { signing, CATALOG_DIGEST } from '@vcs/sdk';
      const vin: string = '${VIN}';
      const a = await signing.status({ vin });
      const d = await deal.open({ workflow: 'buy', vin });
      return { digest: CATALOG_DIGEST, kind: a.type, vin: a.type === 'OK' ? a.value.vin : null, deal: d.type };`);
    expect(r.isError).toBeFalsy();
    const out = jsonOf(r);
    expect(out.result).toMatchObject({ kind: 'OK', vin: VIN, deal: 'OK', digest: expect.stringMatching(/^sha256:/) });
    expect(out.calls).toBe(2);
  });

  it('exec runs the acceptance suite in the isolate, keyless cases without the key, key-spending cases skipped', async () => {
    const out = jsonOf(
      await exec(
        `return await runAcceptanceSuite({ capabilities: ['signing.status', 'vehicle.decode', 'signing.quote', 'apiKey.revoke'] });`,
      ),
    );
    const run = out.result;
    expect(run.digest).toMatch(/^sha256:/);
    expect(run.failed).toBe(0);
    expect(run.passed).toBeGreaterThanOrEqual(6);
    const byId = Object.fromEntries(run.results.map((r: any) => [r.id, r]));
    expect(byId['vehicle.decode:key-required']).toMatchObject({ passed: true });
    expect(byId['signing.quote:offer']).toMatchObject({ passed: true });
    expect(byId['apiKey.revoke:ok'].skipped).toMatch(/spend the calling key/);
    // The caller's key still works after the run.
    expect(jsonOf(await exec('return (await vehicle.decode({ vin: "' + VIN + '" })).type')).result).toBe('OK');
  });

  it('exec returns an OFFER as a value when the service takes no x402 payments (no payment-required result)', async () => {
    const r = await exec(`return await signing.quote({ vin: '${VIN}' });`);
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toBeUndefined();
    expect(jsonOf(r).result).toMatchObject({ type: 'OFFER', value: { capability: 'signing.quote' } });
  });

  it.each([
    ['process', 'return process.env'],
    ['require', 'return require("fs")'],
    ['import()', 'return await import("node:fs")'],
    ['fetch', 'return await fetch("http://example.com")'],
    ['the bridge', 'return await __hostFetch("GET", "/keys", "", "{}")'],
    ['timers', 'return await new Promise((r) => setTimeout(r, 10))'],
  ])('exec contains %s', async (_what, code) => {
    const r = await exec(code);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/exec failed: .*(not defined|could not load module)/);
  });

  it('exec contains an endless loop and a memory bomb, and keeps serving', async () => {
    const loop = await exec('while (true) {}');
    expect(loop.isError).toBe(true);
    expect(textOf(loop)).toMatch(/CPU limit/);
    const bomb = await exec('const keep = []; for (let i = 0; ; i++) keep.push({ i, s: "abc" + i });');
    expect(bomb.isError).toBe(true);
    expect(textOf(bomb)).toMatch(/memory limit|CPU limit/);
    const ok = jsonOf(await exec('return (await signing.status({ vin: "' + VIN + '" })).type'));
    expect(ok.result).toBe('OK');
  });

  it('exec cannot pollute the host prototype', async () => {
    const r = jsonOf(await exec('Object.prototype.polluted = 1; Array.prototype.push = null; return ({}).polluted'));
    expect(r.result).toBe(1);
    expect(({} as any).polluted).toBeUndefined();
    expect(
      jsonOf(await client.callTool({ name: 'search', arguments: { query: 'mco' } })).results.length,
    ).toBeGreaterThan(0);
  });

  it('refuses a foreign Host or Origin (DNS rebinding) and GET', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const headers = { accept: 'application/json, text/event-stream' };
    const o = await call(h.baseUrl, 'POST', '/mcp', { body, headers: { ...headers, origin: 'http://evil.example' } });
    expect(o.status).toBe(403);
    expect(o.json.error.message).toMatch(/Origin: evil\.example/);
    const g = await call(h.baseUrl, 'GET', '/mcp');
    expect(g.status).toBe(405);
    expect(g.headers.get('allow')).toBe('POST');
  });

  it('answers an unsupported protocol version 400, naming the versions it serves, on either revision', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    // 2026-07-28's per-request envelope naming a revision not served: -32022 with the versions served that way.
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2027-01-01',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const modern = await call(h.baseUrl, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } },
      headers: { ...headers, 'mcp-protocol-version': '2027-01-01', 'mcp-method': 'tools/list' },
    });
    expect(modern.status).toBe(400);
    expect(modern.json.error).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '2027-01-01' },
    });
    // A 2025-era request whose MCP-Protocol-Version header names a version not served: the 2025 versions named.
    const legacy = await call(h.baseUrl, 'POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      headers: { ...headers, 'mcp-protocol-version': '2024-01-01' },
    });
    expect(legacy.status).toBe(400);
    expect(legacy.json.error.message).toMatch(/Unsupported protocol version.*2025-11-25/);
  });

  it('calls a noun verb with one params object and narrows the Answer', async () => {
    const client = createClient({ baseUrl: h.baseUrl });
    const a = await signing.status({ vin: VIN }, { client });
    expect(a.type).toBe('OK');
    if (a.type === 'OK') expect(a.value.ceremony.id).toBeTruthy();
    const e = await signing.status({ vin: VIN }, { client, headers: { 'Sandbox-Trigger': 'empty' } });
    expect(e.type).toBe('EMPTY');
  });

  it('sends the key and reports a transport failure by throwing', async () => {
    const { key } = await mintKey(h.baseUrl);
    const d = await deal.open({ workflow: 'buy', vin: VIN }, { client: createClient({ baseUrl: h.baseUrl, key }) });
    expect(d.type).toBe('OK');
    await expect(
      signing.status({}, { client: createClient({ baseUrl: 'http://127.0.0.1:1' }) }),
    ).rejects.toBeInstanceOf(TransportError);
  });
});
