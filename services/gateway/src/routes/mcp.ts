// POST /mcp: MCP over Streamable HTTP on the official SDK 2.x, both revisions at one endpoint, stateless. A request
// that carries 2026-07-28's per-request `_meta` goes to the SDK's own handler (server/discover, resultType, cache
// hints, Mcp-Method/Mcp-Name and protocol-version checks); any other (2025-11-25: initialize, then each request on
// its own) to a 2025 transport answering JSON. Either way a fresh McpServer serves the one request, so any replica
// can answer any request. Host and Origin are checked against DNS rebinding before anything else.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/fastify';
import {
  createMcpHandler,
  isLegacyRequest,
  localhostAllowedHostnames,
  WebStandardStreamableHTTPServerTransport,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { publicBaseOf } from '../context.ts';
import type { GatewayDeps } from '../deps.ts';
import { refuseMethod } from '../methods.ts';
import { buildMcpServer, type McpCaller } from '../mcp/server.ts';

/** Headers of the HTTP exchange itself, which the request handed to the SDK (it has no body) must not claim. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The request as the SDK reads it: its headers and its URL; the JSON-RPC body goes beside it, parsed by fastify. */
function webRequestOf(req: FastifyRequest, baseUrl: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !HOP_BY_HOP.has(k)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  return new Request(`${baseUrl}/mcp`, { method: 'POST', headers });
}

/** Who calls, read from the request the factory is given: tool calls use the caller's own key headers. */
function callerOf(request: Request, takesPayments: boolean): McpCaller {
  const authHeaders: Record<string, string> = {};
  for (const h of ['authorization', 'x-api-key']) {
    const v = request.headers.get(h);
    if (v !== null) authHeaders[h] = v;
  }
  return { baseUrl: request.url.replace(/\/mcp$/, ''), authHeaders, takesPayments };
}

/** A 2025-era request: a fresh server on a stateless 2025 transport (no session id), answered as one JSON body. */
async function serveLegacy(factory: McpServerFactory, request: Request, parsedBody: unknown): Promise<Response> {
  const server = await factory({ era: 'legacy', requestInfo: request });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void transport.close();
    void server.close();
  }
}

export async function mcpRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const hosts = [...localhostAllowedHostnames()];
  if (deps.config.publicBaseUrl) hosts.push(new URL(deps.config.publicBaseUrl).hostname);
  const factory: McpServerFactory = ({ era, requestInfo }) =>
    buildMcpServer(app, callerOf(requestInfo!, deps.config.x402.live), era);
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    onerror: (err) => app.log.debug({ err }, 'mcp request refused or failed'),
  });
  app.addHook('onClose', () => modern.close());

  app.post('/mcp', { onRequest: [hostHeaderValidation(hosts), originValidation(hosts)] }, async (req, reply) => {
    const request = webRequestOf(req, publicBaseOf(req, deps.config));
    try {
      const response = (await isLegacyRequest(request, req.body))
        ? await serveLegacy(factory, request, req.body)
        : await modern.fetch(request, { parsedBody: req.body });
      return reply.send(response);
    } catch (err) {
      req.log.error({ err }, 'mcp request failed');
      return reply.code(500).send({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null });
    }
  });
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  for (const method of ['GET', 'DELETE'] as const)
    refuseMethod(app, method, '/mcp', ['POST'], 'this MCP server is stateless: POST JSON-RPC messages to /mcp');
}
