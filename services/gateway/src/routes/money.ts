import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { commerceSubjects } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import { identify, type Caller } from '../auth.ts';
import type { GatewayDeps } from '../deps.ts';
import { askCommerce, sendMoney } from '../money/commerce.ts';
import { mandateOf } from '../money/headers.ts';
import { refuseMalformedId, sendBlocked } from '../reply.ts';

function contextOf(req: FastifyRequest, caller: Caller): CallContext {
  const trigger = req.headers['sandbox-trigger'];
  return {
    requestId: req.id,
    account: caller.kind === 'key' ? caller.account : null,
    keyId: caller.kind === 'key' ? caller.keyId : null,
    environment: 'sandbox',
    trigger: typeof trigger === 'string' ? trigger : null,
    settled: false,
  };
}

/** Identify the caller; a refused key is always an answer here, and `needKey` makes anonymity one too. */
async function callerOr(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, needKey: string | null): Promise<Caller | null> {
  const caller = await identify(deps.db, req, deps.clock.now());
  if (caller.kind === 'refused') { sendBlocked(reply, caller.code, caller.message, { mint: { method: 'POST', path: '/keys' } }); return null; }
  if (caller.kind === 'anonymous' && needKey) { sendBlocked(reply, 'key-required', needKey, { mint: { method: 'POST', path: '/keys' } }); return null; }
  return caller;
}

/** The intent and handoff rails: read, settle, poll, complete. Commerce owns the state; these are transport. */
export async function moneyRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const slow = deps.config.busTimeoutMs * 2;

  app.get<{ Params: { id: string } }>('/intents/:id', async (req, reply) => {
    if (refuseMalformedId(reply, 'intent', req.params.id)) return reply;
    const caller = await callerOr(deps, req, reply, null);
    if (!caller) return reply;
    return sendMoney(reply, await askCommerce(deps, commerceSubjects.intentsGet, { intentId: req.params.id, ctx: contextOf(req, caller) }, req.id));
  });

  app.post<{ Params: { id: string } }>('/intents/:id/settle', async (req, reply) => {
    if (refuseMalformedId(reply, 'intent', req.params.id)) return reply;
    const caller = await callerOr(deps, req, reply, 'settling an intent needs a key: send Authorization: Bearer <key>; an intent made anonymously is claimed by the first account that settles it');
    if (!caller) return reply;
    const m = mandateOf(req);
    if (m && 'problems' in m) return sendBlocked(reply, 'invalid-mandate', 'the Mandate header must be base64url JSON of a Mandate; fix each problem listed', { problems: m.problems });
    const r = await askCommerce(deps, commerceSubjects.intentsSettle,
      { intentId: req.params.id, ctx: contextOf(req, caller), mandate: m?.mandate, timeoutMs: slow }, req.id, slow + 500);
    reply.header('intent-id', req.params.id);
    return sendMoney(reply, r);
  });

  app.get<{ Params: { id: string } }>('/handoffs/:id', async (req, reply) => {
    if (refuseMalformedId(reply, 'handoff', req.params.id)) return reply;
    const caller = await callerOr(deps, req, reply, 'the handoff rail needs the key of the account that made the handoff');
    if (!caller) return reply;
    return sendMoney(reply, await askCommerce(deps, commerceSubjects.handoffsGet, { handoffId: req.params.id, ctx: contextOf(req, caller) }, req.id));
  });

  app.post<{ Params: { id: string }; Body: unknown }>('/handoffs/:id/complete', async (req, reply) => {
    if (refuseMalformedId(reply, 'handoff', req.params.id)) return reply;
    const caller = await callerOr(deps, req, reply, 'completing a handoff needs the key of the account that made it');
    if (!caller) return reply;
    const body = (req.body ?? {}) as { outcome?: unknown; credential?: unknown };
    const problems = [];
    if (body.outcome !== 'completed' && body.outcome !== 'refused') problems.push({ field: 'outcome', message: 'must be "completed" or "refused"' });
    if (typeof body.credential !== 'string' || !body.credential) problems.push({ field: 'credential', message: 'the credential the handoff names, for example "notary"' });
    if (problems.length) return sendBlocked(reply, 'invalid-input', 'send {"outcome": "completed" | "refused", "credential": "<credential>"}', { problems });
    return sendMoney(reply, await askCommerce(deps, commerceSubjects.handoffsComplete,
      { handoffId: req.params.id, outcome: body.outcome, credential: body.credential, ctx: contextOf(req, caller), timeoutMs: slow }, req.id, slow + 500));
  });
}
