import { capabilityByName, edgeOf, inFlightStates } from '@vcs/contract';
import type { Queryable } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { intentRow, paymentRow, type IntentRow, type PaymentRow } from '../rows.ts';
import { statesSql } from '../transition.ts';
import type { Paying, Presented } from './paying.ts';

/** A payment with its intent beside it (one look). */
export interface PaymentWithIntent {
  payment: PaymentRow;
  intent: IntentRow;
}
/** A payment read with its intent, on its way (not bound by this request). */
export const payingOf = (r: PaymentWithIntent): Paying => ({ intent: r.intent, payment: r.payment, bound: false });

/** The states of a payment whose answer may be owed (in flight, or proven): `payments_owed`'s (commerce 010). */
const OWED_STATES = statesSql([...inFlightStates('payment'), edgeOf('payment', 'prove').to]);

/**
 * The read of `looked`: $1–$4 the authorization's key (network, asset, payer, nonce), $5 its payment-identifier, $6
 * the intent it names, $7 and $8 the route's capability and input (or null: the named intent's).
 */
export const LOOKED_SQL = `with named as (select * from intents where id = $6),
   wanted as (
     select $7::text as capability, $8::jsonb as input where $7::text is not null
     union all select capability, input from named where $7::text is null)
   select 'own' as kind, to_jsonb(p) as payment, to_jsonb(i) as intent
   from payments p join intents i on i.id = p.intent_id
   where (p.network = $1 and lower(p.asset) = lower($2) and lower(p.payer) = lower($3) and lower(p.nonce) = lower($4))
      or p.payment_identifier = $5
   union all (
     select 'owed', to_jsonb(p), to_jsonb(i) from payments p join intents i on i.id = p.intent_id, wanted w
     where lower(p.payer) = lower($3) and p.delivered_at is null and p.status in (${OWED_STATES})
       and i.delivered_at is null
       and i.capability = w.capability and i.input = w.input
     order by p.created_at desc limit 1)
   union all select 'named', null, to_jsonb(n) from named n`;

/**
 * What the steps decide on, read in one statement at the entry: the payments this authorization (or its
 * payment-identifier) already is (`own`, for found), the latest answer this wallet paid for this resource and never
 * got (`owed`), and the intent the payment names (`named`, for offered). The resource is the route's capability and
 * input, or the named intent's.
 */
export interface Looked {
  own: PaymentWithIntent[];
  owed?: PaymentWithIntent;
  named?: IntentRow;
}

export async function looked(services: Services, pr: Presented): Promise<Looked> {
  const { route, intentId } = pr.req;
  const [network, asset, payer, nonce] = pr.key;
  const c = route ? capabilityByName(route.capability) : undefined;
  const input = route ? c?.request.safeParse(route.input) : undefined;
  const { rows } = await services.db.query<{ kind: 'own' | 'owed' | 'named'; payment: unknown; intent: unknown }>(
    LOOKED_SQL,
    [
      network,
      asset,
      payer,
      nonce,
      pr.identifier,
      intentId ?? null,
      input?.success ? route!.capability : null,
      input?.success ? JSON.stringify(input.data) : null,
    ],
  );
  const withIntent = (r: (typeof rows)[number]): PaymentWithIntent => ({
    payment: paymentRow.parse(r.payment),
    intent: intentRow.parse(r.intent),
  });
  const owed = rows.find((r) => r.kind === 'owed');
  const named = rows.find((r) => r.kind === 'named');
  return {
    own: rows.filter((r) => r.kind === 'own').map(withIntent),
    owed: owed && withIntent(owed),
    named: named && intentRow.parse(named.intent),
  };
}

/** A payment and its intent, as stored (the reconciler's way in). */
export async function storedPaying(q: Queryable, paymentId: string): Promise<Paying | undefined> {
  const { rows } = await q.query<{ payment: unknown; intent: unknown }>(
    `select to_jsonb(p) as payment, to_jsonb(i) as intent
     from payments p join intents i on i.id = p.intent_id where p.id = $1`,
    [paymentId],
  );
  return rows[0] && payingOf({ payment: paymentRow.parse(rows[0].payment), intent: intentRow.parse(rows[0].intent) });
}
