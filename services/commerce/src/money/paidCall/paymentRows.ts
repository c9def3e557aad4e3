import { lifecycles, type EventOf } from '@vcs/contract';
import { type Part, type Queryable } from '@vcs/platform';
import { paymentRow, returning, type PaymentRow } from '../rows.ts';
import { move, moveSql, type When } from '../transition.ts';

/**
 * The one module that writes the payments table: a payment bound (inserted, held), moved as the table says (sent,
 * voided, proven, in doubt, refused, expired, sent again), and marked delivered with its intent. Every write returns
 * the row parsed (rows.ts).
 */

/** What a payment is bound with: the authorization, who pays, and what it is settled against. */
export interface NewPayment {
  id: string;
  intentId: string;
  network: string;
  asset: string;
  payTo: string;
  payer: string;
  nonce: string;
  amountAtomic: string;
  validBefore: string;
  x402Version: number;
  payload: unknown;
  requirements: unknown;
  accountId: string | null;
  keyId: string | null;
  environment: string | null;
  identifier: string | null;
  at: string;
}

/** The payment's insert, held, written only where `when` holds (SQL over the parts written with it). */
export function paymentInsert(n: NewPayment, when: string): Part<PaymentRow> & { row: (v: unknown) => PaymentRow } {
  return returning(paymentRow, {
    sql: `insert into payments(
            id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before, x402_version, payload,
            requirements, status, account_id, key_id, environment, payment_identifier, created_at, updated_at
          )
          select $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text,
                 $10::int, $11::jsonb, $12::jsonb, $13::text, $14::text, $15::text, $16::text, $17::text,
                 $18::timestamptz, $18::timestamptz
          where ${when} returning *`,
    params: [
      n.id,
      n.intentId,
      n.network,
      n.asset,
      n.payTo,
      n.payer,
      n.nonce,
      n.amountAtomic,
      n.validBefore,
      n.x402Version,
      JSON.stringify(n.payload),
      JSON.stringify(n.requirements),
      lifecycles.payment.initial,
      n.accountId,
      n.keyId,
      n.environment,
      n.identifier,
      n.at,
    ],
  });
}

/** The columns a payment's move may set beside its status. */
export interface PaymentSet {
  reason?: string | null;
  transaction?: string | null;
  lease_until?: string | null;
  updated_at?: string;
  delivered_at?: string | null;
}

/** A payment's move as a statement, for a step that writes it together with others. */
export const paymentMove = (id: string, event: EventOf<'payment'>, set: PaymentSet, when?: When) =>
  moveSql('payment', id, event, { ...set }, when);

/** A payment's move on its own: the row as moved, or undefined where another moved it first. */
export const movePayment = (q: Queryable, id: string, event: EventOf<'payment'>, set: PaymentSet, when?: When) =>
  move<PaymentRow, 'payment'>(q, 'payment', id, event, { ...set }, when);

/** A payment as stored. */
export async function paymentById(q: Queryable, id: string): Promise<PaymentRow> {
  const { rows } = await q.query<unknown>('select * from payments where id = $1', [id]);
  return paymentRow.parse(rows[0]);
}

/** A paid answer reached its payer: it is owed no more (the paid call's `owed`), the intent and its payments alike. */
export async function markDelivered(q: Queryable, r: { id: string; delivered_at: unknown }, at: Date) {
  if (!r.delivered_at)
    await q.query(
      `with intent as (update intents set delivered_at = $2 where id = $1 and delivered_at is null)
       update payments set delivered_at = $2 where intent_id = $1 and delivered_at is null`,
      [r.id, at.toISOString()],
    );
}
