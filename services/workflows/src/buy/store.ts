import {
  declaredEvent,
  newId,
  platformEvent,
  type DealStep,
  type DealValue,
  type PlatformEventData,
  type PlatformEventInput,
  type PlatformEventType,
} from '@vcs/contract';
import { writeEvents, type Queryable } from '@vcs/platform';
import { buyChecklist, kindOf } from './checklist.ts';

/** A deal as stored: the row of `deals` (001 + 005). */
export interface DealRow {
  id: string;
  account_id: string;
  key_id: string | null;
  environment: 'sandbox' | 'live';
  workflow: 'buy';
  vin: string;
  state: DealValue['state'];
  checklist: DealStep[];
  buyer: { name: string; zip: string } | null;
  current_step: number | null;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

function fromDb(r: any): DealRow {
  return {
    ...r,
    checklist: json<DealStep[]>(r.checklist),
    buyer: r.buyer == null ? null : json(r.buyer),
    version: Number(r.version),
  };
}

export async function insertDeal(
  q: Queryable,
  d: {
    account: string;
    keyId: string | null;
    environment: 'sandbox' | 'live';
    vin: string;
    buyer: DealRow['buyer'];
    checklist: DealStep[];
    now: Date;
  },
): Promise<DealRow> {
  const id = newId('deal');
  const { rows } = await q.query(
    `insert into deals(
       id, account_id, key_id, environment, workflow, vin, state, checklist, buyer, current_step, version, created_at,
       updated_at
     )
     values ($1,$2,$3,$4,'buy',$5,'OPENED',$6,$7,1,0,$8,$8) returning *`,
    [
      id,
      d.account,
      d.keyId,
      d.environment,
      d.vin,
      JSON.stringify(d.checklist),
      d.buyer ? JSON.stringify(d.buyer) : null,
      d.now,
    ],
  );
  return fromDb(rows[0]);
}

export async function loadDeal(q: Queryable, id: string, opts: { lock?: boolean } = {}): Promise<DealRow | null> {
  const { rows } = await q.query(`select * from deals where id = $1${opts.lock ? ' for update' : ''}`, [id]);
  return rows[0] ? fromDb(rows[0]) : null;
}

/** Write the deal back; the caller holds the row lock, and `version` counts every change. */
export async function saveDeal(q: Queryable, d: DealRow, now: Date): Promise<DealRow> {
  const { rows } = await q.query(
    `update deals set state = $2, checklist = $3, current_step = $4, version = version + 1, updated_at = $5
     where id = $1 and version = $6 returning *`,
    [d.id, d.state, JSON.stringify(d.checklist), d.current_step, now, d.version],
  );
  if (!rows[0]) throw new Error(`deal ${d.id} changed under its lock`);
  return fromDb(rows[0]);
}

/**
 * Append a past-tense event to the deal's record and, in the same transaction, to the outbox that
 * publishes it (`publish: false` when the capability runner already writes it, as for deal.open).
 */
export async function appendEvent<T extends DealEventType>(
  q: Queryable,
  d: DealRow,
  type: T,
  step: number | null,
  data: Omit<PlatformEventData<T>, 'dealId' | 'position'>,
  now: Date,
): Promise<void> {
  // Built through the event's declaration (contract platformEvents), so the record and the stream hold one shape.
  const event = platformEvent(
    type,
    {
      occurredAt: now.toISOString(),
      account: d.account_id,
      capability: null,
      vin: d.vin,
      simulated: d.environment === 'sandbox',
    },
    { dealId: d.id, ...(step === null ? {} : { position: step }), ...data } as PlatformEventInput<T>,
  );
  const [e] = await writeEvents(q, [event]);
  await q.query('insert into deal_events(id, deal_id, type, step, data, occurred_at) values ($1,$2,$3,$4,$5,$6)', [
    e!.id,
    d.id,
    type,
    step,
    JSON.stringify(event.data),
    now,
  ]);
}
type DealEventType = Extract<PlatformEventType, `Deal.${string}`>;

/**
 * The deal's Deal.opened@1 (deal.open's declared event: the deal's value) on its record, and on the stream unless the
 * capability runner publishes it (`publish: false`, deal.open itself).
 */
export async function recordOpened(q: Queryable, d: DealRow, now: Date, publish: boolean): Promise<void> {
  const data = { workflow: d.workflow, vin: d.vin, state: 'OPENED', steps: d.checklist.length };
  let id = newId('event');
  if (publish) {
    const value = toValue(d, [
      {
        id,
        type: 'Deal.opened@1',
        step: null,
        occurredAt: now.toISOString(),
        data: { dealId: d.id, step: null, ...data },
      },
    ]);
    const [e] = await writeEvents(q, [
      declaredEvent(
        'Deal.opened@1',
        {
          occurredAt: now.toISOString(),
          account: d.account_id,
          capability: null,
          vin: d.vin,
          simulated: d.environment === 'sandbox',
        },
        value,
      ),
    ]);
    id = e!.id;
  }
  await q.query('insert into deal_events(id, deal_id, type, step, data, occurred_at) values ($1,$2,$3,$4,$5,$6)', [
    id,
    d.id,
    'Deal.opened@1',
    null,
    JSON.stringify({ dealId: d.id, step: null, ...data }),
    now,
  ]);
}

export async function loadEvents(q: Queryable, dealId: string): Promise<DealValue['events']> {
  const { rows } = await q.query(
    'select id, type, step, data, occurred_at from deal_events where deal_id = $1 order by seq',
    [dealId],
  );
  return rows.map((r: any) => ({
    id: r.id,
    type: r.type,
    step: r.step == null ? null : Number(r.step),
    occurredAt: iso(r.occurred_at),
    data: json(r.data),
  }));
}

/** Open deals of an account for a VIN: where a capability's own events may complete a step. */
export async function openDealsFor(q: Queryable, account: string, vin: string): Promise<string[]> {
  const { rows } = await q.query(`select id from deals where account_id = $1 and vin = $2 and state <> 'SETTLED'`, [
    account,
    vin,
  ]);
  return rows.map((r: any) => r.id);
}

/** The value a capability last posted for a VIN (the runner writes vin_facts on every OK). */
export async function factOf(q: Queryable, vin: string, capability: string): Promise<Record<string, unknown> | null> {
  const { rows } = await q.query('select value from vin_facts where vin = $1 and capability = $2', [vin, capability]);
  return rows[0] ? json(rows[0].value) : null;
}

export function toValue(d: DealRow, events: DealValue['events']): DealValue {
  const current = d.current_step ? d.checklist[d.current_step - 1] : undefined;
  return {
    dealId: d.id,
    workflow: d.workflow,
    vin: d.vin,
    buyer: d.buyer,
    state: d.state,
    currentStep: d.current_step,
    // How a step arrives is read from the catalog now, so a deal opened before a catalog change shows the truth.
    checklist: d.checklist.map((s) => {
      const def = buyChecklist[s.position - 1];
      if (!def) return s;
      const k = kindOf(def);
      return { ...s, kind: k.kind, verb: k.verb };
    }),
    pending: current?.pending ?? null,
    events,
    version: d.version,
    openedAt: iso(d.created_at),
    updatedAt: iso(d.updated_at),
  };
}
