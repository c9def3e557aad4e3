import type { Capability } from '@vcs/contract';
import { call } from './harness.ts';

export const WALK_VIN = '1HGCM82633A004352';

/**
 * Sample values by request member name: enough to build a valid input for every capability from its
 * request schema. A required member with no sample fails the walk loudly, so a new input is noticed.
 */
const samples: Record<string, (ctx: WalkContext) => unknown> = {
  vin: () => WALK_VIN,
  state: () => 'CA',
  from: () => '94103',
  to: () => '10001',
  workflow: () => 'buy',
  documentId: (ctx) => ctx.documentId ?? 'doc_unknown',
};
export interface WalkContext {
  documentId?: string;
}

/** A valid input for a capability, built from its request schema's members. */
export function sampleInput(c: Capability, ctx: WalkContext = {}): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(
    c.request.shape as Record<string, { safeParse(v: unknown): { success: boolean } }>,
  )) {
    const optional = member.safeParse(undefined).success;
    const sample = samples[name];
    if (sample) {
      // Optional members other than the VIN are left out: the capability must answer without them.
      if (!optional || name === 'vin') input[name] = sample(ctx);
    } else if (!optional) {
      throw new Error(`${c.name}: no sample for required request member "${name}"; add one to samples`);
    }
  }
  return input;
}

/** The capability's route with its input: query string for GET, JSON body for POST. */
export function send(
  baseUrl: string,
  c: Capability,
  input: Record<string, unknown>,
  key?: string,
  headers: Record<string, string> = {},
) {
  if (c.method === 'GET') {
    const qs = new URLSearchParams(Object.entries(input).map(([k, v]) => [k, String(v)])).toString();
    return call(baseUrl, 'GET', qs ? `${c.path}?${qs}` : c.path, { key, headers });
  }
  return call(baseUrl, 'POST', c.path, { key, body: input, headers });
}

/**
 * Call a capability through to its answer, whatever its gate: a 402 OFFER is settled with the same key,
 * a 403 NEEDS_HUMAN handoff is completed with the named credential and its result read from the poll rail.
 * Returns the final HTTP status and answer, and how it got there.
 */
export async function callThrough(
  baseUrl: string,
  c: Capability,
  input: Record<string, unknown>,
  key: string,
  headers: Record<string, string> = {},
) {
  const first = await send(baseUrl, c, input, key, headers);
  if (first.status === 402 && first.json?.type === 'OFFER') {
    const settled = await call(baseUrl, 'POST', first.json.value.settle.path, { key, headers });
    return { status: settled.status, answer: settled.json, via: 'offer' as const };
  }
  if (first.status === 403 && first.json?.value?.code === 'NEEDS_HUMAN') {
    const id = first.json.value.handoff.id;
    const done = await call(baseUrl, 'POST', `/handoffs/${id}/complete`, {
      key,
      body: { outcome: 'completed', credential: first.json.value.credential },
    });
    if (done.status >= 400) return { status: done.status, answer: done.json, via: 'human' as const };
    const poll = await call(baseUrl, 'GET', `/handoffs/${id}`, { key });
    return { status: poll.status, answer: poll.json?.value?.result, via: 'human' as const };
  }
  return { status: first.status, answer: first.json, via: 'direct' as const };
}
