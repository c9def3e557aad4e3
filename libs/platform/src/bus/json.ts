import { BusError, dec, enc, type Bus } from './types.ts';

/**
 * One JSON request over the bus: encode, send (with the request id for the logs on both sides), and decode
 * the reply with its `status` header. An empty reply is a failed request, like a time-out.
 */
export async function requestJson<T = unknown>(
  bus: Bus, subject: string, body: unknown, opts: { timeoutMs: number; requestId?: string },
): Promise<{ status: number; json: T }> {
  const headers = opts.requestId ? { 'x-request-id': opts.requestId } : undefined;
  const r = await bus.request(subject, enc.encode(JSON.stringify(body)), { timeoutMs: opts.timeoutMs, headers });
  if (!r.data.length) throw new BusError('timeout', `empty reply on ${subject}`);
  return { status: Number(r.headers.status ?? 200), json: JSON.parse(dec.decode(r.data)) as T };
}
