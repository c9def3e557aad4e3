import { hostname } from 'node:os';
import { z } from 'zod';
import {
  problemsOf,
  blocked,
  blockedAnswer,
  codesOf,
  ops,
  type Op,
  type OpInput,
  type OpKey,
  type OpKeysOf,
  type OpReply,
  type OpReplyOf,
  type Pillar,
} from '@vcs/contract';
import { callContext, type CallContext, type Services } from '../handler.ts';
import { isStoreUnavailable, storeUnavailableMessage } from '../store/db.ts';
import { inSpan, SpanKind, tracing } from '../tracing.ts';
import { framedReply, type BusRequest } from './call.ts';
import { dec, type Headers, type Responder, type ServiceIdentity } from './types.ts';

/** What a served request comes to: status, kind and the answer's JSON (made by the caller, who may have it already). */
export interface Served {
  status: number;
  kind: string;
  json: string;
  replayed?: boolean;
  /** The typed members beside the answer (`Op.meta`), as JSON: the frame's second line. */
  meta?: string;
}

/**
 * The one server adapter: answer `subject` in queue group `pillar.<pillar>` (replicas share the load), decode the
 * request, run `handle` inside try/catch and frame the reply (bus/call.ts). A throw is a typed BLOCKED answer:
 * `store-unavailable` (503, retry) when the store is down, else `internal` (500) naming the request id it is logged
 * under. On NATS the subject is the endpoint `what` of the pillar's service in NATS's service discovery, which counts
 * its requests, its 5xx answers as errors and the time each took.
 */
export function serveFramed(
  services: Services,
  subject: string,
  pillar: Pillar,
  what: string,
  handle: (req: BusRequest) => Promise<Served>,
): { stop(): void } {
  // Which replica answered: the gateway passes it on as `x-served-by`, so an operator (or a test) sees load sharing.
  // The host name too: every container's process is pid 1, so a pid alone names no replica.
  const servedBy = `${services.source}/${hostname()}/${process.pid}`;
  // Tracing on (it starts before anything is served): each request continues its caller's trace (its `traceparent`
  // header), and whatever the handler calls or writes carries it. Off, the request goes straight to `handle`.
  const run: (req: BusRequest, headers: Headers) => Promise<Served> = tracing.on
    ? (req, headers) => handleTraced(subject, servedBy, headers.traceparent, handle, req)
    : handle;
  const respond: Responder = async (msg) => {
    let requestId = msg.headers['x-request-id'] ?? 'unknown';
    try {
      const req = JSON.parse(dec.decode(msg.data)) as BusRequest;
      requestId = req.ctx?.requestId ?? requestId;
      const r = await run(req, msg.headers);
      return {
        data: framedReply({ status: r.status, kind: r.kind, servedBy, replayed: r.replayed }, r.json, r.meta),
        failed: r.status >= 500 ? failure(r.status, JSON.parse(r.json)) : undefined,
      };
    } catch (err) {
      const unavailable = isStoreUnavailable(err);
      if (!unavailable) services.log.error({ err, requestId, subject }, `${what} failed`);
      else services.log.warn({ requestId, subject, err: (err as Error).message }, 'store unavailable');
      const code = unavailable ? 'store-unavailable' : 'internal';
      const answer = blocked(
        code,
        unavailable
          ? storeUnavailableMessage(err)
          : `${what} failed unexpectedly; the failure is logged with request id ${requestId}`,
        {},
        { simulated: false, environment: 'sandbox', source: services.source },
      );
      const status = unavailable ? 503 : 500;
      return {
        data: framedReply({ status, kind: 'BLOCKED', servedBy }, JSON.stringify(answer)),
        failed: failure(status, answer),
      };
    }
  };
  return services.bus.serve(subject, `pillar.${pillar}`, respond, {
    service: serviceOf(services, pillar, servedBy),
    endpoint: what,
  });
}

/** A failed answer as discovery's STATS names it: `503 store-unavailable: the store is unreachable; retry shortly`. */
const failure = (status: number, answer: { value?: { code?: unknown; message?: unknown } }) =>
  `${status} ${String(answer.value?.code ?? 'internal')}: ${String(answer.value?.message ?? '')}`;

/**
 * The service a pillar's subjects are served for in NATS's service discovery: one per started pillar (its `services`),
 * named and versioned as its answers' `source` says (`services-pillar@0.1.0`), with the replica it is in `served_by`
 * (as `x-served-by` names it).
 */
const identities = new WeakMap<Services, ServiceIdentity>();
function serviceOf(services: Services, pillar: Pillar, servedBy: string): ServiceIdentity {
  let identity = identities.get(services);
  if (!identity) {
    const at = services.source.lastIndexOf('@');
    identity = {
      name: services.source.slice(0, at),
      version: services.source.slice(at + 1),
      description: `the ${pillar} pillar of the Vehicle Capability Service`,
      metadata: { pillar, served_by: servedBy },
    };
    identities.set(services, identity);
  }
  return identity;
}

/** A request handled in a span continuing its caller's trace (apart, so the untraced path allocates no closure). */
const handleTraced = (
  subject: string,
  servedBy: string,
  traceparent: string | undefined,
  handle: (req: BusRequest) => Promise<Served>,
  req: BusRequest,
) =>
  inSpan(subject, SpanKind.SERVER, traceparent, { 'messaging.system': 'nats', 'vcs.served_by': servedBy }, () =>
    handle(req),
  );

/**
 * A pillar's implementation of its platform operations: one function per declared op, typed from the contract — its
 * input, and its reply: the op's declared answer or a refusal, with its typed members beside it (`OpReplyOf`).
 */
export type OpsImpl<P extends Pillar> = {
  [K in OpKeysOf<P>]: (input: OpInput<K>, ctx: CallContext) => Promise<OpReplyOf<K>>;
};

/**
 * What is wrong with an answer for `op`'s declaration (contract ops.ts), or null: a BLOCKED code it does not
 * declare, or an answer its `reply` schema does not accept.
 */
export function outsideDeclaration(op: Op): (answer: Record<string, unknown>) => string | null {
  const codes = new Set<string>(codesOf(op));
  return (answer) => {
    const refused = answer.type === 'BLOCKED';
    const code = refused ? (answer.value as { code?: unknown } | undefined)?.code : undefined;
    if (refused && !op.passesCapabilityCodes && !codes.has(String(code)))
      return `code ${String(code)} is not among its declared codes`;
    // A refusal is a BLOCKED envelope; anything else is its declared reply.
    const parsed = (refused ? blockedAnswer : op.reply).safeParse(answer);
    return parsed.success
      ? null
      : `its reply schema refuses it: ${problemsOf(parsed.error.issues)
          .map((p) => `${p.field}: ${p.message}`)
          .join('; ')}`;
  };
}

/** What is wrong with the members an answer of `op` carries beside it (`Op.meta`), or null. */
function membersOutside(op: Op, members: unknown): string | null {
  if (!op.meta) return 'it sends members beside its answer but declares none';
  const parsed = op.meta.safeParse(members);
  return parsed.success
    ? null
    : `its members refuse it: ${problemsOf(parsed.error.issues)
        .map((p) => `${p.field}: ${p.message}`)
        .join('; ')}`;
}

/**
 * Serve every platform operation of `pillar`: the request (its input and the caller's context) is parsed with the
 * op's schemas before the implementation sees it. Outside production each answer is checked against the op's
 * declaration, and one outside it is a 500 `internal` (logged), so a test meets it.
 */
export function serveOps<P extends Pillar>(services: Services, pillar: P, impl: OpsImpl<P>): { stop(): void } {
  const checking = services.settings.NODE_ENV !== 'production';
  const stops = (Object.keys(impl) as OpKeysOf<P>[]).map((key) => {
    const op: Op = ops[key as OpKey];
    const run = impl[key] as (input: unknown, ctx: CallContext) => Promise<OpReply>;
    const request = z.object({ input: op.input, ctx: callContext });
    const check = checking ? outsideDeclaration(op) : null;
    return serveFramed(services, op.subject, pillar, op.name, async (req) => {
      const parsed = request.safeParse({ input: req.input ?? {}, ctx: req.ctx });
      let r: OpReply = parsed.success
        ? await run(parsed.data.input, parsed.data.ctx)
        : // The caller's input is named as the body; a malformed context is the caller's bug, named as `ctx.…`.
          {
            status: 400,
            answer: {
              ...blocked('invalid-input', `the input to ${op.name} is not valid; fix each problem listed`, {
                problems: problemsOf(
                  parsed.error.issues.map((i) => (i.path[0] === 'input' ? { ...i, path: i.path.slice(1) } : i)),
                ),
              }),
            },
          };
      let json = JSON.stringify(r.answer);
      const members = r.meta === undefined ? undefined : JSON.stringify(r.meta);
      // Checked as the caller will read it (a Date is its ISO text by then).
      const wrong = check?.(JSON.parse(json)) ?? (members && check ? membersOutside(op, JSON.parse(members)) : null);
      if (wrong) {
        const requestId = parsed.success ? parsed.data.ctx.requestId : 'unknown';
        services.log.error({ op: op.name, requestId, wrong }, 'operation answered outside its declaration');
        r = {
          status: 500,
          answer: {
            ...blocked(
              'internal',
              `${op.name} answered outside its declaration (${wrong}); ` +
                `the failure is logged with request id ${requestId}`,
            ),
          },
        };
        json = JSON.stringify(r.answer);
      }
      return {
        status: r.status,
        kind: String(r.answer.type ?? 'OK'),
        json,
        replayed: r.replayed,
        meta: wrong ? undefined : members,
      };
    });
  });
  return { stop: () => stops.forEach((s) => s.stop()) };
}
