import type { z } from 'zod';
import { ops } from '@vcs/contract';
import { anonymousContext, callOp, type Db } from '@vcs/platform';
import { callerOf } from '../dispatch.ts';
import type { GatewayDeps } from '../deps.ts';

export interface Fact {
  noun: string;
  capability: string;
  answer: string;
  value: unknown;
  postedAt: string;
}
export type DealRow = z.output<typeof ops.dealsForVin.reply>['value']['deals'][number];

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));

/** Every fact posted for a VIN (the runner writes one row per capability that answered OK), optionally one noun's. */
export async function factsFor(db: Db, vin: string, noun?: string): Promise<Fact[]> {
  const { rows } = await db.query<any>(
    `select noun, capability, answer, value, posted_at from vin_facts
     where vin = $1 ${noun ? 'and noun = $2' : ''} order by noun, capability`,
    noun ? [vin, noun] : [vin],
  );
  // Account ids stay out: the record is keyless and says what is known about the car, not who asked.
  return rows.map((r) => ({
    noun: r.noun,
    capability: r.capability,
    answer: r.answer,
    value: typeof r.value === 'string' ? JSON.parse(r.value) : r.value,
    postedAt: iso(r.posted_at),
  }));
}

/**
 * The deals on a car, from the workflows pillar that owns them; none while it is not answering (the record still
 * shows the facts).
 */
export async function dealsFor(
  deps: Pick<GatewayDeps, 'bus' | 'clock' | 'config'>,
  vin: string,
  requestId: string,
): Promise<DealRow[]> {
  const r = await callOp(callerOf(deps), ops.dealsForVin, { vin }, anonymousContext(requestId));
  return r.answer.type === 'OK' ? r.answer.value.deals : [];
}
