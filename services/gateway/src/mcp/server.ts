// The MCP server behind POST /mcp: search, fetch and exec over the catalog. One fresh server per request (stateless).
import type { FastifyInstance } from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { catalogAddress, capabilityByName, catalogDigest, describeCapability, vin as vinSchema } from '@vcs/contract';
import { execInIsolate, EXEC_LIMITS } from './isolate.ts';
import { offerResult, PAYMENT_META, payOffer } from './payment.ts';
import { capabilityLine, searchCapabilities } from './search.ts';

export interface McpCaller {
  baseUrl: string;
  authHeaders: Record<string, string>;
  /** Whether this service takes x402 payments: then an OFFER exec returns is x402's payment-required result. */
  takesPayments?: boolean;
  /** The offer's PaymentRequired with its x402 extensions (discovery, signed offers), as PAYMENT-REQUIRED has it. */
  completeOffer?: (capability: string, x402: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

const json = (v: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(v) }] });
const failure = (message: string) => ({ isError: true, content: [{ type: 'text' as const, text: message }] });

async function vinRecord(app: FastifyInstance, caller: McpCaller, vin: string) {
  // The record face (GET /{vin}) when the gateway has it; else the keyless decode.
  const r = await app.inject({
    method: 'GET',
    url: `/${vin}`,
    headers: { accept: 'application/json', ...caller.authHeaders },
  });
  if (r.statusCode === 200) return { source: `GET /${vin}`, record: r.json() };
  const decoded = await app.inject({ method: 'GET', url: `/decode/${encodeURIComponent(vin)}` });
  return {
    source: 'decode',
    record:
      decoded.statusCode === 200 ? { vin, decode: decoded.json().decode } : { vin, problem: decoded.json()?.value },
  };
}

export function buildMcpServer(app: FastifyInstance, caller: McpCaller): McpServer {
  const server = new McpServer({ name: 'vehicle-capability-service', version: catalogDigest().slice(7, 19) });

  server.registerTool(
    'search',
    {
      description:
        'Find capabilities by words. ' +
        'Results carry the wire name (noun.verb), route, gate, price and a one-line summary; ' +
        'pass an id to fetch for the full descriptor.',
      inputSchema: { query: z.string().min(1).max(500).describe('words, for example "signing fee quote"') },
    },
    async ({ query }) =>
      json({
        results: searchCapabilities(query).map(({ c }) => ({
          id: c.name,
          title: `${c.name} (${c.method} ${c.path})`,
          url: `${caller.baseUrl}${catalogAddress(c)}`,
          text: capabilityLine(c),
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
        'Run TypeScript against the pinned SDK (catalog digest ' +
          catalogDigest() +
          ') in an isolate with no network, file system, env, process or timers.',
        'Every noun is a global (e.g. `await signing.status({ vin })`), ' +
          'as are settle, pollHandoff, the workflow functions and `sdk`; ' +
          '`import { signing } from "@vcs/sdk"` also works.',
        'Calls go to this service with your key. `return` the Answer values you want. ' +
          'exec never pays for you: ' +
          (caller.takesPayments
            ? "returning an OFFER gives x402's payment-required result (isError, the PaymentRequired in " +
              'structuredContent); call exec again with the same code and a PaymentPayload in ' +
              `params._meta["${PAYMENT_META}"] to pay it and get the paid answer (the code is not run again).`
            : 'an OFFER comes back as an OFFER.'),
        "`runAcceptanceSuite({ capabilities: ['signing.status'] })` " +
          'runs the published acceptance suite here, in the isolate.',
        `Limits: ${EXEC_LIMITS.cpuMs} ms CPU, ${EXEC_LIMITS.memoryBytes / 1048576} MiB memory, ` +
          `${EXEC_LIMITS.maxCalls} calls, ${EXEC_LIMITS.wallMs} ms overall.`,
      ].join(' '),
      inputSchema: {
        code: z.string().min(1).max(100_000).describe('the body of an async function; use `return` for the result'),
      },
    },
    async ({ code }, extra) => {
      // A payment comes from the MCP client beside the call, never from the code: it pays the offer it names.
      const payment = extra._meta?.[PAYMENT_META];
      if (payment !== undefined) return payOffer(app, caller.authHeaders, payment);
      const r = await execInIsolate(code, async (method, path, body, headers) => {
        if (!path.startsWith('/') || path.startsWith('//') || /^\/mcp(\/|\?|$)/.test(path))
          return {
            status: 400,
            body: JSON.stringify({ bridgeError: `exec may only call service paths, not ${path}` }),
          };
        // The isolate can only ever drop the caller's authority (`x-vcs-anonymous`), never add another.
        const pass: Record<string, string> = Object.keys(headers).some((k) => k.toLowerCase() === 'x-vcs-anonymous')
          ? {}
          : { ...caller.authHeaders };
        for (const [k, v] of Object.entries(headers))
          if (/^(content-type|accept|sandbox-trigger|idempotency-key)$/i.test(k)) pass[k.toLowerCase()] = String(v);
        const res = await app.inject({ method: method as 'GET' | 'POST', url: path, headers: pass, payload: body });
        return { status: res.statusCode, body: res.body };
      });
      if (!r.ok) return failure(`exec failed: ${r.error}`);
      const offer =
        caller.takesPayments && caller.completeOffer ? await offerResult(r.result, caller.completeOffer) : null;
      return offer ?? json({ result: r.result, calls: r.calls });
    },
  );
  return server;
}
