// The MCP server behind POST /mcp: search, fetch and exec over the catalog, on the official SDK 2.x. One fresh server
// per request, for either revision (stateless).
import type { FastifyInstance } from 'fastify';
import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  callLine,
  catalogAddress,
  capabilityByName,
  catalogDigest,
  describeCapability,
  vin as vinSchema,
} from '@vcs/contract';
import { execInIsolate, EXEC_LIMITS } from './isolate.ts';
import { bindingOf, offerResult, PAYMENT_EXTENSION, PAYMENT_META, payOffer } from './payment.ts';
import { capabilityLine, searchCapabilities } from './search.ts';

export interface McpCaller {
  baseUrl: string;
  authHeaders: Record<string, string>;
  /** Whether this service takes x402 payments: then an OFFER exec returns is x402's payment-required. */
  takesPayments?: boolean;
}

/**
 * How long a client may keep what server/discover and tools/list answered (2026-07-28 `ttlMs`): both are the same for
 * every caller of a deployment (`public`), and change only with a new one.
 */
const CACHE_HINT = { ttlMs: 300_000, cacheScope: 'public' } as const;

const json = (v: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(v) }] });
const failure = (message: string) => ({ isError: true, content: [{ type: 'text' as const, text: message }] });

/**
 * Headers for a request the gateway sends itself on the caller's behalf: the caller's key, and the caller's Host, so
 * what the gateway writes into an answer (an offer's resource URL, a receipt's) names the address the caller used.
 */
const onBehalfOf = (caller: McpCaller) => ({ host: new URL(caller.baseUrl).host, ...caller.authHeaders });

async function vinRecord(app: FastifyInstance, caller: McpCaller, vin: string) {
  // The record face (GET /{vin}) when the gateway has it; else the keyless decode.
  const r = await app.inject({
    method: 'GET',
    url: `/${vin}`,
    headers: { accept: 'application/json', ...onBehalfOf(caller) },
  });
  if (r.statusCode === 200) return { source: `GET /${vin}`, record: r.json() };
  const decoded = await app.inject({ method: 'GET', url: `/decode/${encodeURIComponent(vin)}` });
  return {
    source: 'decode',
    record:
      decoded.statusCode === 200 ? { vin, decode: decoded.json().decode } : { vin, problem: decoded.json()?.value },
  };
}

/**
 * The server for one request of `era` (`modern`: 2026-07-28, `legacy`: 2025-11-25 and before). With payments taken,
 * a 2026-07-28 server declares x402's `org.x402/payment` extension in server/discover; the tools never change while
 * the process runs (no listChanged).
 */
export function buildMcpServer(app: FastifyInstance, caller: McpCaller, era: 'modern' | 'legacy'): McpServer {
  const server = new McpServer(
    { name: 'vehicle-capability-service', version: catalogDigest().slice(7, 19) },
    {
      capabilities: {
        tools: { listChanged: false },
        ...(caller.takesPayments && era === 'modern' ? { extensions: { [PAYMENT_EXTENSION]: {} } } : {}),
      },
      cacheHints: { 'server/discover': CACHE_HINT, 'tools/list': CACHE_HINT },
    },
  );

  server.registerTool(
    'search',
    {
      description:
        'Find capabilities by words: the best 5, each with its wire name (noun.verb) as id, its summary as ' +
        'title and its route, gate, inputs, answer and price as text. Pass an id to fetch for the full descriptor.',
      inputSchema: { query: z.string().min(1).max(500).describe('words, for example "signing fee quote"') },
    },
    async ({ query }) =>
      json({
        results: searchCapabilities(query, 5).map(({ c }) => ({
          id: c.name,
          title: c.summary,
          url: `${caller.baseUrl}${catalogAddress(c)}`,
          text: callLine(c),
        })),
      }),
  );

  server.registerTool(
    'fetch',
    {
      description: 'Fetch a capability descriptor by its wire name (noun.verb) or a vehicle record by VIN.',
      inputSchema: {
        id: z.string().min(1).max(200).describe('a wire name like signing.status, or a 17-character VIN'),
      },
    },
    async ({ id }) => {
      const c = capabilityByName(id);
      if (c) {
        const d = describeCapability(c);
        return json({
          id: c.name,
          title: `${c.name}: ${c.summary}`,
          text: `${capabilityLine(c)}\n${JSON.stringify(d)}`,
          url: `${caller.baseUrl}${catalogAddress(c)}`,
          metadata: { method: c.method, path: c.path, gate: c.gate, price: c.price, answer: c.answer },
        });
      }
      const v = vinSchema.safeParse(id);
      if (!v.success)
        return failure(
          `no capability or VIN "${id}": use a wire name from search (noun.verb) or a valid 17-character VIN`,
        );
      const { source, record } = await vinRecord(app, caller, v.data);
      return json({
        id: v.data,
        title: `Vehicle ${v.data}`,
        text: JSON.stringify(record),
        url: `${caller.baseUrl}/${v.data}`,
        metadata: { source },
      });
    },
  );

  server.registerTool(
    'exec',
    {
      description: [
        `Run TypeScript against this service's SDK (catalog ${catalogDigest()}) in an isolate: no network, files, ` +
          'env or timers. Every noun is a global (`await signing.status({ vin })`), as are settle, pollHandoff, the ' +
          'workflows and `sdk`. Calls use your key; `return` the Answers you want.',
        caller.takesPayments
          ? "exec never pays: a returned OFFER answers x402's payment-required; to pay, call exec again with the " +
            `same code and a PaymentPayload for accepts[0] in params._meta["${PAYMENT_META}"] (the code is not run again).`
          : 'exec never pays: an OFFER comes back as an OFFER.',
        '`runAcceptanceSuite({ capabilities })` runs the acceptance suite here.',
        `Limits: ${EXEC_LIMITS.cpuMs} ms CPU, ${EXEC_LIMITS.memoryBytes / 1048576} MiB, ${EXEC_LIMITS.maxCalls} calls, ` +
          `${EXEC_LIMITS.wallMs / 1000} s.`,
      ].join(' '),
      inputSchema: {
        code: z.string().min(1).max(100_000).describe('the body of an async function; use `return` for the result'),
      },
    },
    async ({ code }, ctx) => {
      // A payment comes from the MCP client beside the call, never from the code: it pays the offer it names.
      const binding = bindingOf(ctx, era);
      const payment = ctx.mcpReq._meta?.[PAYMENT_META];
      if (payment !== undefined) return payOffer(app, onBehalfOf(caller), payment, binding) as Promise<CallToolResult>;
      const r = await execInIsolate(code, async (method, path, body, headers) => {
        if (!path.startsWith('/') || path.startsWith('//') || /^\/mcp(\/|\?|$)/.test(path))
          return {
            status: 400,
            body: JSON.stringify({ bridgeError: `exec may only call service paths, not ${path}` }),
          };
        // The isolate can only ever drop the caller's authority (`x-vcs-anonymous`), never add another.
        const pass: Record<string, string> = Object.keys(headers).some((k) => k.toLowerCase() === 'x-vcs-anonymous')
          ? { host: new URL(caller.baseUrl).host }
          : onBehalfOf(caller);
        for (const [k, v] of Object.entries(headers))
          if (/^(content-type|accept|sandbox-trigger|idempotency-key)$/i.test(k)) pass[k.toLowerCase()] = String(v);
        const res = await app.inject({ method: method as 'GET' | 'POST', url: path, headers: pass, payload: body });
        return { status: res.statusCode, body: res.body };
      });
      if (!r.ok) return failure(`exec failed: ${r.error}`);
      // `payment_required` is a result type of x402's extension, which the SDK passes through for tools/call.
      const offer = caller.takesPayments ? (offerResult(r.result, binding) as CallToolResult | null) : null;
      return offer ?? json({ result: r.result, calls: r.calls });
    },
  );
  return server;
}
