import type { FastifyInstance } from 'fastify';
import { commerceSubjects } from '@vcs/contract';
import { dec } from '@vcs/platform';
import type { GatewayDeps } from '../deps.ts';
import { sendBlocked } from '../reply.ts';


/** POST /keys: an anonymous sandbox key and its account; no email, approval or CAPTCHA. */
export async function keyRoutes(app: FastifyInstance, deps: GatewayDeps) {
  app.post('/keys', async (req, reply) => {
    try {
      const r = await deps.bus.request(commerceSubjects.keysMint, new Uint8Array(), { timeoutMs: deps.config.busTimeoutMs, headers: { 'x-request-id': req.id } });
      const minted = JSON.parse(dec.decode(r.data)) as { key: string; account: string };
      const base = deps.config.publicBaseUrl ?? `${req.protocol}://${req.host}`;
      return reply.code(200).send({
        type: 'OK', key: minted.key, account: minted.account, environment: 'sandbox',
        links: { pricing: `${base}/pricing`, agents_json: `${base}/.well-known/agents.json`, docs: `${base}/llms.txt` },
      });
    } catch {
      return sendBlocked(reply, 'pillar-unavailable', 'the commerce pillar is not answering; retry shortly', { pillar: 'commerce' });
    }
  });
}
