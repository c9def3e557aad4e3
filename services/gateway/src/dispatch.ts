import { blocked, capabilities } from '@vcs/contract';
import { BusError, unframeReply, type Bus, type BusMessage, type CallContext, type CapabilityRequest } from '@vcs/platform';
import { busRequestSeconds, busRetries, childrenOf } from './metrics.ts';

export interface DispatchResult { status: number; body: Uint8Array | object; kind?: string; servedBy?: string }

/** Reads are idempotent: a GET whose replica died, timed out or whose connection closed is tried once more. */
const idempotentSubjects = new Set(capabilities.filter((c) => c.method === 'GET').map((c) => c.subject));

const busTimer = childrenOf(busRequestSeconds);
const observe = (pillar: string, outcome: string, seconds: number) => busTimer({ pillar, outcome }).observe(seconds);

async function timed(bus: Bus, subject: string, pillar: string, data: Uint8Array, timeoutMs: number): Promise<BusMessage> {
  const start = performance.now();
  try {
    const r = await bus.request(subject, data, { timeoutMs });
    observe(pillar, 'ok', (performance.now() - start) / 1000);
    return r;
  } catch (err) {
    observe(pillar, err instanceof BusError ? err.code : 'error', (performance.now() - start) / 1000);
    throw err;
  }
}

/**
 * Send one capability call to its pillar and return the pillar's bytes untouched (no re-parse on the hot path).
 * No replica, a time-out or a closed bus become a typed 503 BLOCKED, never a hang or a bare 500.
 * A GET is retried once (NATS queue groups pick another replica for the retry when one is left).
 */
export async function dispatch(bus: Bus, subject: string, pillar: string, input: unknown, ctx: CallContext, timeoutMs: number): Promise<DispatchResult> {
  const data = Buffer.from(JSON.stringify({ input: input as CapabilityRequest['input'], ctx, reply: 'framed' } satisfies CapabilityRequest));
  let attempts = idempotentSubjects.has(subject) ? 2 : 1;
  for (;;) {
    try {
      const reply = await timed(bus, subject, pillar, data, timeoutMs); // the request id travels in ctx
      // An empty reply is a responder that failed (bus/nats.ts); a pillar of an earlier version answers with
      // headers; the current one frames its answer (runner.ts).
      const answer = !reply.data.length ? null
        : reply.headers.status ? { status: Number(reply.headers.status), kind: reply.headers.kind, servedBy: reply.headers['served-by'], body: reply.data }
        : unframeReply(reply.data);
      if (!answer) return { status: 503, body: blocked('pillar-unavailable', `the ${pillar} pillar failed to answer`, { pillar }), kind: 'BLOCKED' };
      return answer;
    } catch (err) {
      const why = err instanceof BusError ? err.code : 'error';
      if (--attempts > 0) {
        busRetries.inc({ pillar, reason: why });
        // After no-responders, give a restarting replica a moment to subscribe again.
        if (why !== 'timeout') await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const message = why === 'no-responders'
        ? `no ${pillar} pillar replica is running; retry shortly`
        : why === 'closed' ? `the bus to the ${pillar} pillar is closed; retry shortly`
        : `the ${pillar} pillar did not answer within ${timeoutMs} ms; retry shortly`;
      return { status: 503, body: blocked('pillar-unavailable', message, { pillar, reason: why }), kind: 'BLOCKED' };
    }
  }
}
