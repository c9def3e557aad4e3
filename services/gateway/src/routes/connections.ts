import type { FastifyInstance } from 'fastify';
import { CONNECTION_SUBJECTS } from '@vcs/contract';
import { requestJson } from '@vcs/platform';
import { identify } from '../auth.ts';
import type { GatewayDeps } from '../deps.ts';
import { sendBlocked } from '../reply.ts';

/** POST /connections (going live) and GET /activation-queue, both keyed; served by the services pillar. */
export async function connectionRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const ask = async (subject: string, payload: unknown, requestId: string) =>
    (await requestJson<any>(deps.bus, subject, payload, { timeoutMs: deps.config.busTimeoutMs, requestId })).json;

  app.post('/connections', async (req, reply) => {
    const caller = await identify(deps.db, req, deps.clock.now());
    if (caller.kind === 'refused') return sendBlocked(reply, caller.code, caller.message);
    if (caller.kind !== 'key') return sendBlocked(reply, 'key-required', 'submitting a connection needs a key: mint one with POST /keys and send it as Authorization: Bearer <key>');
    let out: any;
    try { out = await ask(CONNECTION_SUBJECTS.submit, { account: caller.account, body: req.body ?? {} }, req.id); }
    catch { return sendBlocked(reply, 'pillar-unavailable', 'the services pillar is not answering; retry shortly', { pillar: 'services' }); }
    if (out.error) return sendBlocked(reply, 'invalid-input', 'the connection does not match {kind, system, credential, nouns?}', { problems: out.error });
    return reply.code(200).send({ type: 'OK', answers: 'Connection@1', value: out.connection });
  });

  app.get('/activation-queue', async (req, reply) => {
    const caller = await identify(deps.db, req, deps.clock.now());
    if (caller.kind === 'refused') return sendBlocked(reply, caller.code, caller.message);
    if (caller.kind !== 'key') return sendBlocked(reply, 'key-required', 'the activation queue needs a key: mint one with POST /keys');
    try {
      const out = await ask(CONNECTION_SUBJECTS.queue, { account: caller.account }, req.id);
      return reply.code(200).send({ type: 'OK', answers: 'ActivationQueue@1', value: out });
    } catch { return sendBlocked(reply, 'pillar-unavailable', 'the services pillar is not answering; retry shortly', { pillar: 'services' }); }
  });
}
