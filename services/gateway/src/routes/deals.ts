import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buyDealRequest, dealSubjects, problemsOf } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import { identify } from '../auth.ts';
import type { GatewayDeps } from '../deps.ts';
import { dispatch } from '../dispatch.ts';
import { refuseMalformedId, sendBlocked } from '../reply.ts';

// The workflows pillar answers these (services/workflows/src/buy/serve.ts).
const SUBJECT = dealSubjects;

/** The buy workflow's face: open a deal, read it, advance it. Every route needs a key; the pillar owns the logic. */
export async function dealRoutes(app: FastifyInstance, deps: GatewayDeps) {
  /** The caller's context, or null when a refusal was already sent. */
  async function context(req: FastifyRequest, reply: FastifyReply): Promise<CallContext | null> {
    const caller = await identify(deps.db, req, deps.clock.now());
    if (caller.kind === 'refused') { sendBlocked(reply, caller.code, caller.message, { mint: { method: 'POST', path: '/keys' } }); return null; }
    if (caller.kind === 'anonymous') {
      sendBlocked(reply, 'key-required', 'deals need a key: send Authorization: Bearer <key> (or X-Api-Key). Mint one, free and anonymous, with POST /keys', { mint: { method: 'POST', path: '/keys' } });
      return null;
    }
    const trigger = req.headers['sandbox-trigger'];
    return { requestId: req.id, account: caller.account, keyId: caller.keyId, environment: 'sandbox', trigger: typeof trigger === 'string' ? trigger : null, settled: false };
  }

  async function send(reply: FastifyReply, subject: string, input: unknown, ctx: CallContext, timeoutMs = deps.config.busTimeoutMs) {
    const r = await dispatch(deps.bus, subject, 'workflows', input, ctx, timeoutMs);
    reply.code(r.status).type('application/json');
    return reply.send(r.body instanceof Uint8Array ? Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength) : r.body);
  }

  app.post('/buy/deals', async (req, reply) => {
    const parsed = buyDealRequest.safeParse(req.body ?? {});
    if (!parsed.success) return sendBlocked(reply, 'invalid-input', 'the deal cannot be opened; fix each problem listed', { problems: problemsOf(parsed.error.issues, 'body') });
    const ctx = await context(req, reply);
    if (!ctx) return reply;
    return send(reply, SUBJECT.open, parsed.data, ctx);
  });

  app.get<{ Params: { id: string } }>('/buy/deals/:id', async (req, reply) => {
    if (refuseMalformedId(reply, 'deal', req.params.id)) return reply;
    const ctx = await context(req, reply);
    if (!ctx) return reply;
    return send(reply, SUBJECT.get, { dealId: req.params.id }, ctx);
  });

  // An advance may run several free steps and open an offer or handoff: it gets three bus time-outs.
  app.post<{ Params: { id: string } }>('/buy/deals/:id/advance', async (req, reply) => {
    if (refuseMalformedId(reply, 'deal', req.params.id)) return reply;
    const ctx = await context(req, reply);
    if (!ctx) return reply;
    return send(reply, SUBJECT.advance, { dealId: req.params.id }, ctx, deps.config.busTimeoutMs * 3);
  });
}
