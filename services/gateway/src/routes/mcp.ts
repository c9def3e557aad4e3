// POST /mcp: MCP over Streamable HTTP, stateless (a fresh server and transport per request; a reused stateless
// transport mixes up request ids). Host and Origin are checked against DNS rebinding before anything else.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { publicBaseOf } from '../context.ts';
import type { GatewayDeps } from '../deps.ts';
import { sendBlocked } from '../reply.ts';
import { buildMcpServer } from '../mcp/server.ts';
import { withExtensions } from '../money/x402.ts';
import { capabilityByName } from '@vcs/contract';

function allowedHosts(deps: GatewayDeps): Set<string> {
  const hosts = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
  if (deps.config.publicBaseUrl) hosts.add(new URL(deps.config.publicBaseUrl).hostname);
  return hosts;
}

const hostnameOf = (hostHeader: string) => {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return '';
  }
};

/** Why this request may not reach the MCP server, or null when it may. */
export function rebindingProblem(req: FastifyRequest, hosts: Set<string>): string | null {
  const host = req.headers.host ?? '';
  if (!hosts.has(hostnameOf(host))) return `Host "${host}" is not served here (DNS rebinding protection)`;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let h = '';
    try {
      h = new URL(origin).hostname;
    } catch {
      /* refused below */
    }
    if (!hosts.has(h) && !hosts.has(`[${h}]`)) return `Origin "${origin}" is not allowed (DNS rebinding protection)`;
  }
  return null;
}

function authHeadersOf(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof req.headers.authorization === 'string') out.authorization = req.headers.authorization;
  if (typeof req.headers['x-api-key'] === 'string') out['x-api-key'] = req.headers['x-api-key'];
  return out;
}

export async function mcpRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const hosts = allowedHosts(deps);
  app.post('/mcp', async (req, reply) => {
    const problem = rebindingProblem(req, hosts);
    if (problem) return sendBlocked(reply, 'forbidden', problem);
    const baseUrl = publicBaseOf(req, deps.config);
    const server = buildMcpServer(app, {
      baseUrl,
      authHeaders: authHeadersOf(req),
      takesPayments: deps.config.x402.live,
      completeOffer: async (capability, x402) => {
        const c = capabilityByName(capability);
        return c ? withExtensions(c, x402 as never, deps.config.receiptSigner) : x402;
      },
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      req.log.error({ err }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
      }
    }
  });
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      handler: (_req, reply) =>
        sendBlocked(reply, 'method-not-allowed', 'this MCP server is stateless: POST JSON-RPC messages to /mcp'),
    });
  }
}
