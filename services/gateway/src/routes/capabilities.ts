import type { FastifyInstance } from 'fastify';
import { capabilities, problemsOf, type Capability } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import { requestContext, type KeyNeed } from '../context.ts';
import type { GatewayDeps } from '../deps.ts';
import { dispatch } from '../dispatch.ts';
import { gates } from '../gates.ts';
import { bodyObject, sameRequest, sendBlocked } from '../reply.ts';

/** A capability's gate says what it needs of the key: a free read never locks out, an offer can be paid anonymously. */
const keyNeedOf: Record<Capability['gate'], KeyNeed> = {
  none: 'free',
  offer: 'optional',
  key: 'required',
  human: 'required',
};

/** Query parameters that look like a key: refused with a pointer to the header, not as an unknown parameter. */
const KEY_PARAMS = ['key', 'api_key', 'apiKey', 'api-key', 'access_token', 'token'];

/** One route per capability of the catalog: nothing here restates a path, a gate or a shape. */
export async function capabilityRoutes(app: FastifyInstance, deps: GatewayDeps) {
  for (const c of capabilities) {
    app.route({
      method: c.method,
      url: c.path,
      config: { capability: c },
      handler: async (req, reply) => {
        const where = c.method === 'GET' ? 'query' : 'body';
        const raw = where === 'query' ? req.query : bodyObject(req, reply);
        if (!raw) return reply;
        const keyInQuery = KEY_PARAMS.find((k) => k in (req.query as Record<string, unknown>));
        if (keyInQuery) {
          return sendBlocked(
            reply,
            'invalid-input',
            'keys are not accepted in the query string (URLs end up in logs and proxies): ' +
              'send it as Authorization: Bearer <key> or X-Api-Key: <key>',
            {
              problems: [
                {
                  field: keyInQuery,
                  in: 'query',
                  message: 'remove the key from the URL and send it in the Authorization header',
                },
              ],
              capability: c.name,
              next: sameRequest(req),
            },
          );
        }
        const parsed = c.request.safeParse(raw);
        if (!parsed.success) {
          return sendBlocked(
            reply,
            'invalid-input',
            `the input to ${c.name} (${c.method} ${c.path}) is not valid; fix each problem listed`,
            { problems: problemsOf(parsed.error.issues, where), capability: c.name, next: sameRequest(req) },
          );
        }
        const { caller } = req;
        let ctx = requestContext(req, reply, keyNeedOf[c.gate], c.name, c);
        if (!ctx) return reply;
        const mandated = await gates.mandate(c, parsed.data as Record<string, unknown>, caller, ctx, req, reply, deps);
        if (mandated.sent) return reply;
        ctx = mandated.ctx;
        if (c.gate === 'offer' || c.gate === 'human') {
          const outcome = await gates[c.gate](c, parsed.data as Record<string, unknown>, caller, ctx, req, reply, deps);
          if (outcome.sent) return reply;
          ctx = outcome.ctx;
        }
        return forward(deps, c, parsed.data, ctx, reply);
      },
    });
  }
}

export async function forward(
  deps: GatewayDeps,
  c: Capability,
  input: unknown,
  ctx: CallContext,
  reply: import('fastify').FastifyReply,
) {
  const r = await dispatch(deps.bus, c, input, ctx, deps.config.busTimeoutMs);
  reply.code(r.status).type('application/json').header('x-answer-kind', r.kind);
  if (r.servedBy) reply.header('x-served-by', r.servedBy);
  return reply.send(
    r.body instanceof Uint8Array ? Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength) : r.body,
  );
}
