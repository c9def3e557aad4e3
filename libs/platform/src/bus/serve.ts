import { hostname } from 'node:os';
import { problemsOf, blocked, ops, type OpInput, type OpKey, type OpKeysOf, type OpReply, type Pillar } from '@vcs/contract';
import type { CallContext, Services } from '../handler.ts';
import { isStoreUnavailable } from '../store/db.ts';
import { framedReply, type BusRequest } from './call.ts';
import { dec } from './types.ts';

/** What a served request comes to: status, kind and the answer's JSON (made by the caller, who may have it already). */
export interface Served { status: number; kind: string; json: string; replayed?: boolean }

/**
 * The one server adapter: answer `subject` in queue group `pillar.<pillar>` (replicas share the load), decode the
 * request, run `handle` inside try/catch and frame the reply (bus/call.ts). A throw is a typed BLOCKED answer:
 * `store-unavailable` (503, retry) when the store is down, else `internal` (500) naming the request id it is logged under.
 */
export function serveFramed(services: Services, subject: string, pillar: Pillar, what: string, handle: (req: BusRequest) => Promise<Served>): { stop(): void } {
  // Which replica answered: the gateway passes it on as `x-served-by`, so an operator (or a test) sees load sharing.
  // The host name too: every container's process is pid 1, so a pid alone names no replica.
  const servedBy = `${services.source}/${hostname()}/${process.pid}`;
  return services.bus.serve(subject, `pillar.${pillar}`, async (msg) => {
    let requestId = msg.headers['x-request-id'] ?? 'unknown';
    try {
      const req = JSON.parse(dec.decode(msg.data)) as BusRequest;
      requestId = req.ctx?.requestId ?? requestId;
      const r = await handle(req);
      return { data: framedReply({ status: r.status, kind: r.kind, servedBy, replayed: r.replayed }, r.json) };
    } catch (err) {
      const unavailable = isStoreUnavailable(err);
      if (!unavailable) services.log.error({ err, requestId, subject }, `${what} failed`);
      else services.log.warn({ requestId, subject, err: (err as Error).message }, 'store unavailable');
      const code = unavailable ? 'store-unavailable' : 'internal';
      const answer = blocked(code, unavailable ? 'the store is unreachable; retry shortly' : `${what} failed unexpectedly; the failure is logged with request id ${requestId}`,
        {}, { simulated: false, environment: 'sandbox', source: services.source });
      return { data: framedReply({ status: unavailable ? 503 : 500, kind: 'BLOCKED', servedBy }, JSON.stringify(answer)) };
    }
  });
}

/** A pillar's implementation of its platform operations: one function per declared op, typed from the contract. */
export type OpsImpl<P extends Pillar> = { [K in OpKeysOf<P>]: (input: OpInput<K>, ctx: CallContext) => Promise<OpReply> };

/** Serve every platform operation of `pillar`: the input is parsed with the op's schema before the implementation sees it. */
export function serveOps<P extends Pillar>(services: Services, pillar: P, impl: OpsImpl<P>): { stop(): void } {
  const stops = (Object.keys(impl) as OpKeysOf<P>[]).map((key) => {
    const op = ops[key as OpKey];
    const run = impl[key] as (input: unknown, ctx: CallContext) => Promise<OpReply>;
    return serveFramed(services, op.subject, pillar, op.name, async (req) => {
      const parsed = op.input.safeParse(req.input ?? {});
      const r: OpReply = parsed.success ? await run(parsed.data, req.ctx)
        : { status: 400, answer: { ...blocked('invalid-input', `the input to ${op.name} is not valid; fix each problem listed`, { problems: problemsOf(parsed.error.issues) }) } };
      return { status: r.status, kind: String(r.answer.type ?? 'OK'), json: JSON.stringify(r.answer), replayed: r.replayed };
    });
  });
  return { stop: () => stops.forEach((s) => s.stop()) };
}
