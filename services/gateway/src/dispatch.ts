import { blocked } from '@vcs/contract';
import { BusError, enc, type Bus, type CallContext } from '@vcs/platform';

export interface DispatchResult { status: number; body: Uint8Array | object }

/**
 * Send one capability call to its pillar and return the pillar's bytes untouched (no re-parse on the hot path).
 * No replica, a time-out or a closed bus become a typed 503 BLOCKED, never a hang or a bare 500.
 */
export async function dispatch(bus: Bus, subject: string, pillar: string, input: unknown, ctx: CallContext, timeoutMs: number): Promise<DispatchResult> {
  try {
    const reply = await bus.request(subject, enc.encode(JSON.stringify({ input, ctx })), { timeoutMs, headers: { 'x-request-id': ctx.requestId } });
    const status = Number(reply.headers.status ?? 200);
    if (!reply.data.length) return { status: 503, body: blocked('pillar-unavailable', `the ${pillar} pillar failed to answer`, { pillar }) };
    return { status, body: reply.data };
  } catch (err) {
    const why = err instanceof BusError ? err.code : 'error';
    const message = why === 'no-responders'
      ? `no ${pillar} pillar replica is running; retry shortly`
      : `the ${pillar} pillar did not answer within ${timeoutMs} ms; retry shortly`;
    return { status: 503, body: blocked('pillar-unavailable', message, { pillar, reason: why }) };
  }
}
