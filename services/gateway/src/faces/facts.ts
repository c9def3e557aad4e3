import type { Db } from '@vcs/platform';

export interface Fact { noun: string; capability: string; answer: string; value: unknown; postedAt: string }
export interface DealRow { id: string; workflow: string; state: string; checklist: unknown; createdAt: string; updatedAt: string }

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));

/** Every fact posted for a VIN (the runner writes one row per capability that answered OK), optionally one noun's. */
export async function factsFor(db: Db, vin: string, noun?: string): Promise<Fact[]> {
  const { rows } = await db.query<any>(
    `select noun, capability, answer, value, posted_at from vin_facts where vin = $1 ${noun ? 'and noun = $2' : ''} order by noun, capability`,
    noun ? [vin, noun] : [vin],
  );
  // Account ids stay out: the record is keyless and says what is known about the car, not who asked.
  return rows.map((r) => ({ noun: r.noun, capability: r.capability, answer: r.answer, value: typeof r.value === 'string' ? JSON.parse(r.value) : r.value, postedAt: iso(r.posted_at) }));
}

export async function dealsFor(db: Db, vin: string): Promise<DealRow[]> {
  const { rows } = await db.query<any>('select id, workflow, state, checklist, created_at, updated_at from deals where vin = $1 order by created_at, id', [vin]);
  return rows.map((r) => ({ id: r.id, workflow: r.workflow, state: r.state, checklist: typeof r.checklist === 'string' ? JSON.parse(r.checklist) : r.checklist, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) }));
}
