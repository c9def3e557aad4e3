import type { FastifyInstance } from 'fastify';
import { commerceSubjects } from '@vcs/contract';
import type { GatewayDeps } from '../deps.ts';
import { askCommerce, sendMoney } from '../money/commerce.ts';
import { sendBlocked } from '../reply.ts';


/** POST /keys: an anonymous sandbox key and its account; no email, approval or CAPTCHA. */
export async function keyRoutes(app: FastifyInstance, deps: GatewayDeps) {
  // A GET here is a caller who followed a link: say which method mints, rather than "no such route".
  app.get('/keys', async (_req, reply) => {
    reply.header('allow', 'POST');
    return sendBlocked(reply, 'method-not-allowed', 'keys are minted with POST /keys (no body, no key needed); GET /keys/me introspects the key you send',
      { mint: { method: 'POST', path: '/keys' }, introspect: { method: 'GET', path: '/keys/me' } });
  });

  app.post('/keys', async (req, reply) => {
    // A refusal (commerce silent: pillar-unavailable; its store down: store-unavailable) is sent as it is.
    const r = await askCommerce(deps, commerceSubjects.keysMint, {}, req.id);
    if (r.status !== 200) return sendMoney(reply, r);
    const minted = r.answer as { key: string; account: string };
    const base = deps.config.publicBaseUrl ?? `${req.protocol}://${req.host}`;
    return reply.code(200).send({
      type: 'OK', key: minted.key, account: minted.account, environment: 'sandbox',
      links: { pricing: `${base}/pricing`, agents_json: `${base}/.well-known/agents.json`, docs: `${base}/llms.txt` },
    });
  });
}
