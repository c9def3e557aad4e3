/**
 * The reference seller of `pnpm bench:x402` (test/bench/x402.ts): fastify with @x402/core's resource server, as its
 * documentation wires one — `x402ResourceServer` over an `HTTPFacilitatorClient` (the rail's facilitator) with
 * @x402/evm's exact scheme registered for the network, wrapped in `x402HTTPResourceServer` with one paid route —
 * answering fixed bytes (the file BODY_FILE) at POST /signings/quote, priced as ours: 1.00 USD, exact, on
 * X402_NETWORK, in X402_ASSET, to X402_PAY_TO. The flow is the stock middleware's: processHTTPRequest (402 with
 * PAYMENT-REQUIRED, or verify) → the handler's bytes → processSettlement (settle) → PAYMENT-RESPONSE.
 * Environment: PORT, BODY_FILE, X402_FACILITATOR_URL, X402_NETWORK, X402_ASSET, X402_PAY_TO.
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  HTTPFacilitatorClient,
  x402HTTPResourceServer,
  x402ResourceServer,
  type HTTPAdapter,
  type HTTPRequestContext,
} from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';

const env = (name: string) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is required`);
    process.exit(78);
  }
  return v;
};
const body = readFileSync(env('BODY_FILE'));
const network = env('X402_NETWORK') as Network;

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: env('X402_FACILITATOR_URL') })).register(
  network,
  new ExactEvmScheme(),
);
const http = new x402HTTPResourceServer(resourceServer, {
  'POST /signings/quote': {
    accepts: {
      scheme: 'exact',
      network,
      payTo: env('X402_PAY_TO'),
      maxTimeoutSeconds: 900,
      // 1.00 USD in the rail's token (6 decimals), named as the token's EIP-712 domain names itself.
      price: { amount: '1000000', asset: env('X402_ASSET'), extra: { name: 'USDC', version: '2' } },
    },
    description: 'signing.quote (reference: fixed bytes)',
    mimeType: 'application/json',
  },
});
await http.initialize(); // GET /supported from the facilitator, and the route checked against it

/** The framework adapter the middleware reads the request through. */
function adapterOf(req: FastifyRequest): HTTPAdapter {
  return {
    getHeader: (name) => {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    },
    getMethod: () => req.method,
    getPath: () => req.url.split('?')[0]!,
    getUrl: () => `${req.protocol}://${req.host}${req.url}`,
    getAcceptHeader: () => req.headers.accept ?? '',
    getUserAgent: () => req.headers['user-agent'] ?? '',
    getBody: () => req.body,
  };
}

const send = (reply: FastifyReply, r: { status: number; headers: Record<string, string>; body?: unknown }) =>
  reply
    .code(r.status)
    .headers(r.headers)
    .send(r.body ?? {});

const app = Fastify({ logger: false });
app.post('/signings/quote', async (req, reply) => {
  const context: HTTPRequestContext = { adapter: adapterOf(req), path: req.url.split('?')[0]!, method: req.method };
  const r = await http.processHTTPRequest(context);
  if (r.type === 'payment-error') return send(reply, r.response);
  if (r.type === 'no-payment-required') return reply.type('application/json').send(body);
  // Paid and verified: the handler's answer (fixed bytes), then settlement; the answer goes out only once settled.
  const settled = await http.processSettlement(
    r.paymentPayload,
    r.paymentRequirements,
    r.declaredExtensions,
    { request: context, responseBody: body },
    undefined,
    r.beforeHandlerSettlement,
  );
  if (!settled.success) return send(reply, settled.response);
  return reply.headers(settled.headers).type('application/json').send(body);
});
await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
