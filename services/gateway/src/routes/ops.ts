import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MINT_KEY, ops, problemsOf, setByGatewayMembers, type Op, type OpReply } from '@vcs/contract';
import { callOp, type CallContext } from '@vcs/platform';
import { publicBaseOf, requestContext } from '../context.ts';
import { callerOf } from '../dispatch.ts';
import type { GatewayDeps } from '../deps.ts';
import { mandateOf } from '../money/headers.ts';
import { paymentOrRefusal } from '../money/x402.ts';
import { payCapabilityCall, sendPaidReply } from '../money/pay.ts';
import { payableOf, sendPriced, withHowToPay } from '../money/required.ts';
import { refuseMethod } from '../methods.ts';
import { refuseIntentTrigger } from '../triggers.ts';
import { bodyObject, refuseMalformedId, sameRequest, sendBlocked, sendOpReply } from '../reply.ts';

/** What a route adds to its operation's declaration: only what HTTP alone knows. */
interface RouteOptions {
  /**
   * Answer the request another way when it calls for one: true, its answer is sent; false, the operation answers it.
   * A boolean, not the reply: a FastifyReply is a thenable that resolves to nothing, so awaiting it reads as "not
   * answered" and the operation would run after the answer was sent.
   */
  instead?(req: FastifyRequest, reply: FastifyReply, ctx: CallContext): Promise<boolean>;
  /** Input members taken from the request beyond path parameters and body (headers). */
  extra?(req: FastifyRequest, reply: FastifyReply): Record<string, unknown> | null;
  /**
   * The route checks the request's Sandbox-Trigger itself (`instead`), once it knows its capability; else any trigger
   * of the catalog passes here.
   */
  checksTrigger?: true;
  /** Shape the answer for HTTP (POST /keys adds its links), else it is sent as the pillar answered. */
  send?(reply: FastifyReply, r: OpReply, req: FastifyRequest, ctx: CallContext): unknown;
}

const idKinds = { intentId: 'intent', handoffId: 'handoff', dealId: 'deal' } as const;

/**
 * Serve the HTTP face of a platform operation from its declaration (contract ops.ts): method and path from
 * `route`, path parameters and the JSON body (POST) as its input, parsed with its schema here so a bad one is a
 * 400 naming each problem before any bus hop; the caller's key as `route.key` says; then one `callOp`, whose
 * time-out is the operation's (contract `opTimeouts`).
 */
function routeOp(app: FastifyInstance, deps: GatewayDeps, op: Op, opts: RouteOptions = {}) {
  const route = op.route!;
  const url = route.path.replace(/\{(\w+)\}/g, ':$1');
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]! as keyof typeof idKinds);
  const setHere = setByGatewayMembers(op);
  app.route({
    method: route.method,
    url,
    handler: async (req, reply) => {
      const path = req.params as Record<string, string>;
      for (const p of params) if (refuseMalformedId(reply, idKinds[p], path[p]!)) return reply;
      const ctx = requestContext(req, reply, route.key, op.name, opts.checksTrigger ? 'route' : 'catalog');
      if (!ctx) return reply;
      if (opts.instead && (await opts.instead(req, reply, ctx))) return reply;
      const extra = opts.extra ? opts.extra(req, reply) : {};
      if (!extra) return reply; // the refusal is sent
      const sent = route.method === 'POST' ? bodyObject(req, reply) : {};
      if (!sent) return reply;
      const body = { ...sent };
      for (const k of setHere) delete body[k];
      const parsed = op.input.safeParse({ ...body, ...path, ...extra });
      if (!parsed.success) {
        return sendBlocked(
          reply,
          'invalid-input',
          `the input to ${route.method} ${route.path} is not valid; fix each problem listed`,
          { problems: problemsOf(parsed.error.issues, 'body'), next: sameRequest(req) },
        );
      }
      const r = await callOp(callerOf(deps), op, parsed.data, ctx);
      return opts.send ? opts.send(reply, r, req, ctx) : sendOpReply(reply, r);
    },
  });
}

/** Every platform operation with an HTTP face; what each adds to its declaration is here, beside it. */
export async function opRoutes(app: FastifyInstance, deps: GatewayDeps) {
  routeOp(app, deps, ops.keysMint, {
    send(reply, r, req) {
      if (r.status !== 200) return sendOpReply(reply, r); // commerce silent or its store down: a typed refusal
      const base = publicBaseOf(req, deps.config);
      return reply.code(200).send({
        type: 'OK',
        key: r.answer.key,
        account: r.answer.account,
        environment: 'sandbox',
        links: { pricing: `${base}/pricing`, agents_json: `${base}/.well-known/agents.json`, docs: `${base}/llms.txt` },
      });
    },
  });
  routeOp(app, deps, ops.intentsGet);
  routeOp(app, deps, ops.intentsSettle, {
    checksTrigger: true,
    // With an x402 payment the intent is paid through the one money path (money/pay.ts); with a key, settled.
    async instead(req, reply, ctx) {
      const intentId = (req.params as { intentId: string }).intentId;
      // A trigger its capability does not honour is refused before any payment is read or settlement asked for.
      if (await refuseIntentTrigger(deps, req, reply, ctx, intentId)) return true;
      const resourceUrl = `${publicBaseOf(req, deps.config)}${req.url.split('?')[0]}`;
      const payment = await paymentOrRefusal(req, reply, deps, { intentId, ctx }, resourceUrl);
      if (payment === 'refused') return true;
      if (!payment) return false;
      sendPaidReply(reply, await payCapabilityCall(deps, { intentId, payment, ctx, resourceUrl }));
      return true;
    },
    extra(req, reply) {
      const m = mandateOf(req);
      if (m && 'problems' in m) {
        sendBlocked(
          reply,
          'invalid-mandate',
          'the Mandate header must be base64url JSON of a Mandate; fix each problem listed',
          { problems: m.problems, next: sameRequest(req) },
        );
        return null;
      }
      reply.header('intent-id', (req.params as { intentId: string }).intentId);
      return { mandate: m?.mandate };
    },
    // A 402 (a stored refusal of payment) says how to pay: the new offer it names, as PAYMENT-REQUIRED.
    async send(reply, r, req) {
      const resourceUrl = `${publicBaseOf(req, deps.config)}${req.url.split('?')[0]}`;
      return sendPriced(reply, await withHowToPay(deps, r, resourceUrl));
    },
  });
  routeOp(app, deps, ops.handoffsGet);
  routeOp(app, deps, ops.handoffsComplete);
  routeOp(app, deps, ops.dealsOpen);
  routeOp(app, deps, ops.dealsGet);
  routeOp(app, deps, ops.dealsAdvance, {
    // The step's offer (402) says how to pay, and is paid here too: a stock x402 client sends its payment to the URL
    // that answered the 402, and it pays the step's intent as its settle route would (the deal moves on its event).
    async send(reply, r, req, ctx) {
      const resourceUrl = `${publicBaseOf(req, deps.config)}${req.url.split('?')[0]}`;
      const offered = r.status === 402 ? payableOf(r.answer)?.intentId : undefined;
      if (offered) {
        const payment = await paymentOrRefusal(req, reply, deps, { intentId: offered, ctx }, resourceUrl);
        if (payment === 'refused') return reply;
        if (payment)
          return sendPaidReply(reply, await payCapabilityCall(deps, { intentId: offered, payment, ctx, resourceUrl }));
      }
      return sendPriced(reply, await withHowToPay(deps, r, resourceUrl));
    },
  });
  routeOp(app, deps, ops.connectionsSubmit);
  routeOp(app, deps, ops.connectionsQueue);

  // A GET of /keys is a caller who followed a link: say which method mints, rather than only which are allowed.
  refuseMethod(
    app,
    'GET',
    '/keys',
    ['POST'],
    'keys are minted with POST /keys (no body, no key needed); GET /keys/me introspects the key you send',
    { mint: MINT_KEY, introspect: { method: 'GET', path: '/keys/me' }, next: MINT_KEY },
  );
}
