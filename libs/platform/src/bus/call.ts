import type { z } from 'zod';
import {
  blocked,
  opTimeouts,
  type Capability,
  type Op,
  type OpAnswer,
  type OpMeta,
  type PillarAnswer,
} from '@vcs/contract';
import { systemClock, type Clock } from '../clock.ts';
import type { CallContext, Services } from '../handler.ts';
import { busRequestSeconds, busRetries, childrenOf } from '../metrics.ts';
import { endSpan, requestSpan, tracing } from '../tracing.ts';
import { BusError, operationOf, type Bus, type Headers } from './types.ts';

/**
 * The one client of the bus's request-reply: every capability call and platform operation, from the gateway, from
 * commerce (a settled intent runs its capability) and from the workflow engine, goes through `call`.
 * One request form (`{ input, ctx }`), one reply form (framed, below), one time-out and retry rule, and an absent
 * or silent pillar is a typed 503 BLOCKED answer, never a throw.
 */

/**
 * An answer's metadata as the pillar reports it: HTTP status, answer kind, which replica answered, and whether it is a
 * stored answer replayed.
 */
export interface ReplyMeta {
  status: number;
  kind: string;
  servedBy: string;
  replayed?: boolean;
}

/**
 * `<status> <kind> <served-by>[ replayed][ members]\n<answer JSON>[\n<members JSON>]`: one line the gateway splits
 * off without copying the answer, then the answer, then — for a platform operation that declares them (`Op.meta`),
 * flagged `members` — its typed members beside the answer (JSON text holds no raw newline: the last one separates
 * them). Measured against NATS headers (performance.md): headers cost an encoding in the pillar, a decoding in the
 * gateway and a header frame through NATS on every call; this costs one string join and a scan of the first bytes.
 */
export function framedReply(meta: ReplyMeta, json: string, members?: string): Buffer {
  const head = `${meta.status} ${meta.kind} ${meta.servedBy}${meta.replayed ? ' replayed' : ''}`;
  return Buffer.from(members === undefined ? `${head}\n${json}` : `${head} members\n${json}\n${members}`);
}

/**
 * The metadata and answer bytes of a framed reply (a view, not a copy), and its members' bytes when it has them, or
 * null when `data` is not one.
 */
export function unframeReply(data: Uint8Array): (ReplyMeta & { body: Uint8Array; members?: Uint8Array }) | null {
  const end = data.subarray(0, 256).indexOf(10); // '\n'
  if (end < 0) return null;
  const [status, kind, servedBy, ...flags] = Buffer.from(data.buffer, data.byteOffset, end)
    .toString('latin1')
    .split(' ');
  const code = Number(status);
  const replayed = flags[0] === 'replayed';
  const members = flags[replayed ? 1 : 0] === 'members';
  if (!(code >= 100 && code <= 599) || !kind || !servedBy || flags.length !== Number(replayed) + Number(members))
    return null;
  const after = data.subarray(end + 1);
  const split = members ? after.lastIndexOf(10) : -1;
  return {
    status: code,
    kind,
    servedBy,
    ...(replayed ? { replayed: true } : {}),
    ...(split < 0 ? { body: after } : { body: after.subarray(0, split), members: after.subarray(split + 1) }),
  };
}

/** What a caller sends: the input and the caller's context. */
export interface BusRequest {
  input: unknown;
  ctx: CallContext;
}

export type Unavailable = 'no-responders' | 'timeout' | 'closed' | 'unreadable';
/** A pillar's reply; `unavailable` says why there was none (then `body` is the 503 answer made here). */
export interface CallResult extends ReplyMeta {
  body: Uint8Array | Record<string, unknown>;
  /** A platform operation's typed members beside the answer (`Op.meta`), as JSON bytes. */
  members?: Uint8Array;
  unavailable?: Unavailable;
}

const timer = childrenOf(busRequestSeconds);

/**
 * Send one request to `pillar` on `subject`. With no replica subscribed, any request is sent again until one is or
 * its time-out has passed (it did not run). An idempotent request whose replica timed out or whose connection closed
 * is sent once more (NATS queue groups pick another replica when one is left). Never throws: no replica, a time-out,
 * a closed bus or an unreadable reply come back as a 503 BLOCKED `pillar-unavailable` with `unavailable` set — a
 * `no-responders` certainly did not run, a `timeout` may have.
 */
export function call(
  bus: Bus,
  subject: string,
  pillar: string,
  req: BusRequest,
  opts: CallOptions,
): Promise<CallResult> {
  return tracing.on ? callTraced(bus, subject, pillar, req, opts) : callOnce(bus, subject, pillar, req, opts);
}

type CallOptions = { timeoutMs: number; idempotent: boolean; clock?: Pick<Clock, 'sleep'> };

/** A call as a CLIENT span of the active trace, its `traceparent` sent as a header (a retry is in the same span). */
async function callTraced(
  bus: Bus,
  subject: string,
  pillar: string,
  req: BusRequest,
  opts: CallOptions,
): Promise<CallResult> {
  const traced = requestSpan(subject)!;
  const r = await callOnce(bus, subject, pillar, req, opts, traced.headers);
  endSpan(traced.span, r.unavailable, { 'vcs.status': r.status, 'vcs.answer': r.kind });
  return r;
}

async function callOnce(
  bus: Bus,
  subject: string,
  pillar: string,
  req: BusRequest,
  opts: CallOptions,
  headers?: Headers,
): Promise<CallResult> {
  const data = Buffer.from(JSON.stringify(req));
  let attempts = opts.idempotent ? 2 : 1;
  // No replica subscribed: the request certainly did not run, so any call waits for one (a replica reconnecting
  // after its NATS node died, or restarting) within its own time-out, pausing a little longer each time. In one
  // process (the memory bus) no replica can come: it answers at once.
  const noReplicaUntil = bus.kind === 'nats' ? performance.now() + opts.timeoutMs : 0;
  let noReplicaPause = 100;
  for (;;) {
    const start = performance.now();
    let why: Unavailable;
    try {
      // The request id travels in ctx; only a traced call sends headers (its `traceparent`).
      const reply = await bus.request(
        subject,
        data,
        headers ? { timeoutMs: opts.timeoutMs, headers } : { timeoutMs: opts.timeoutMs },
      );
      timer({ pillar, outcome: 'ok' }).observe((performance.now() - start) / 1000);
      const framed = unframeReply(reply.data);
      if (framed) return framed;
      why = 'unreadable'; // an empty reply is a responder that failed (bus/nats.ts)
    } catch (err) {
      why = err instanceof BusError ? err.code : 'timeout';
      timer({ pillar, outcome: why }).observe((performance.now() - start) / 1000);
    }
    // Every time-out is a line (a retried read's too: the replica that took it may be stuck): the pillar, the
    // operation and the request; the replica, which a time-out cannot know, is named if its reply comes late (nats.ts).
    if (why === 'timeout')
      bus.logger?.warn(
        { ...operationOf(subject), requestId: req.ctx.requestId, timeoutMs: opts.timeoutMs, retried: attempts > 1 },
        'bus call timed out',
      );
    if (why === 'no-responders' && performance.now() + noReplicaPause < noReplicaUntil) {
      busRetries.inc({ pillar, reason: why });
      await systemClock.sleep(noReplicaPause); // a real process reconnecting: real time
      noReplicaPause = Math.min(noReplicaPause * 2, 500);
      continue;
    }
    if ((why === 'timeout' || why === 'closed') && --attempts > 0) {
      busRetries.inc({ pillar, reason: why });
      if (why === 'closed') await (opts.clock ?? systemClock).sleep(100);
      continue;
    }
    if (why !== 'timeout')
      bus.logger?.warn({ ...operationOf(subject), requestId: req.ctx.requestId, reason: why }, 'bus call unanswered');
    const message =
      why === 'no-responders'
        ? `no ${pillar} pillar replica is running; retry shortly`
        : why === 'closed'
          ? `the bus to the ${pillar} pillar is closed; retry shortly`
          : why === 'unreadable'
            ? `the ${pillar} pillar failed to answer; retry shortly`
            : `the ${pillar} pillar did not answer within ${opts.timeoutMs} ms; retry shortly`;
    return {
      status: 503,
      kind: 'BLOCKED',
      servedBy: '',
      unavailable: why,
      body: blocked('pillar-unavailable', message, { pillar, reason: why }) as unknown as Record<string, unknown>,
    };
  }
}

/** The answer of a call as an object (the gateway's hot path forwards `body` bytes instead). */
export function answerOf(r: CallResult): Record<string, unknown> {
  return r.body instanceof Uint8Array ? JSON.parse(textOf(r.body)) : r.body;
}

/**
 * What a caller needs to reach the bus: the bus, the clock its retry pauses on, and BUS_TIMEOUT_MS (the one time-out
 * rule, contract `opTimeouts`).
 */
export interface BusCaller {
  bus: Bus;
  clock?: Pick<Clock, 'sleep'>;
  busTimeoutMs: number;
}
export const busCallerOf = (s: Pick<Services, 'bus' | 'clock' | 'settings'>): BusCaller => ({
  bus: s.bus,
  clock: s.clock,
  busTimeoutMs: s.settings.BUS_TIMEOUT_MS,
});

/**
 * A call's reply with its answer parsed: typed by the operation's declared reply (its server checks each answer against
 * it outside production).
 */
export interface OpResult<A = Record<string, unknown>, M = unknown> {
  status: number;
  answer: A;
  replayed?: boolean;
  /** The operation's typed members beside the answer (`Op.meta`), when it sent them. */
  meta?: M;
  unavailable?: Unavailable;
}
const textOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
/** The answer and members as their operation declares them: its server was typed by the same declaration. */
const parsedReply = <A, M>(r: CallResult): OpResult<A, M> => ({
  status: r.status,
  answer: answerOf(r) as A,
  ...(r.replayed ? { replayed: true } : {}),
  ...(r.members ? { meta: JSON.parse(textOf(r.members)) as M } : {}),
  ...(r.unavailable ? { unavailable: r.unavailable } : {}),
});

/**
 * Call a platform operation with its declared subject, pillar, retry rule and time-out (`opTimeouts`: an input with a
 * `timeoutMs` member gets the pillar's share unless the caller set it). Its input is parsed by its server.
 */
export async function callOp<O extends Op>(
  via: BusCaller,
  op: O,
  input: z.input<O['input']>,
  ctx: CallContext,
): Promise<OpResult<OpAnswer<O>, OpMeta<O>>> {
  const given = (input as { timeoutMs?: number }).timeoutMs;
  const t = opTimeouts(op, via.busTimeoutMs, given);
  const takesTimeout = 'timeoutMs' in ((op.input as unknown as { shape?: object }).shape ?? {});
  const sent = takesTimeout && given === undefined ? { ...(input as object), timeoutMs: t.timeoutMs } : input;
  return parsedReply(
    await call(
      via.bus,
      op.subject,
      op.pillar,
      { input: sent, ctx },
      { timeoutMs: t.waitMs, idempotent: op.idempotent, clock: via.clock },
    ),
  );
}

/**
 * Send a capability call to its pillar and return the pillar's bytes untouched (the gateway's hot path forwards
 * them). Its retry rule: a read (GET) is idempotent.
 */
export function sendCapability(
  bus: Bus,
  c: Pick<Capability, 'subject' | 'pillar' | 'method'>,
  input: unknown,
  ctx: CallContext,
  timeoutMs: number,
  clock?: Pick<Clock, 'sleep'>,
): Promise<CallResult> {
  return call(bus, c.subject, c.pillar, { input, ctx }, { timeoutMs, idempotent: c.method === 'GET', clock });
}

/** Run a capability from inside the platform (a settled intent, a deal step), exactly as the gateway sends it. */
export async function callCapability(
  via: BusCaller,
  c: Capability,
  input: unknown,
  ctx: CallContext,
  timeoutMs = via.busTimeoutMs,
) {
  return parsedReply<PillarAnswer, never>(await sendCapability(via.bus, c, input, ctx, timeoutMs, via.clock));
}
