import { createHash } from 'node:crypto';
import { canonicalJson, checkMandate, fromCents, mandate as mandateSchema, toCents, type Mandate } from '@vcs/contract';
import type { CallContext, Queryable, Sql } from '@vcs/platform';
import type { CommerceServices as Services } from '../config.ts';
import { refuse } from './common.ts';
import { jsonValue } from './rows.ts';

/**
 * The mandate ledger: a delegated settlement reserves the call's hard ceiling against the mandate's ceiling in the
 * transaction that claims the intent (a conditional update on a locked row, so concurrent calls never spend past
 * it), and a settlement that fails gives it back. Spend is the presenting account's (docs/money.md).
 */

/** What a settlement took from a mandate's ledger, given back if it fails. */
export interface Reservation {
  account: string;
  principal: string;
  id: string;
  cents: number;
}

/** The intent's facts a reservation reads. */
interface Reserving {
  id: string;
  account_id: string | null;
  capability: string;
  price: unknown;
  ceiling_cents: string | number | bigint;
}

const digestOf = (m: Mandate) => createHash('sha256').update(canonicalJson(m)).digest('hex');

/** Reserve the intent's ceiling under `mandate`; a refusal that says why not is thrown (the transaction undone). */
export async function reserveMandate(
  services: Services,
  q: Queryable,
  ctx: CallContext,
  r: Reserving,
  mandate: unknown,
  now: Date,
): Promise<Reservation> {
  // Spend is the presenting account's (docs/money.md): the same principal and id under another account is another
  // ledger.
  const account = r.account_id ?? ctx.account!;
  const m = mandateSchema.safeParse(mandate);
  if (!m.success) refuse(services, ctx, 'invalid-mandate', 'the mandate does not match the Mandate schema');
  const price = jsonValue(r.price) as { currency: string };
  const violation = checkMandate(m.data, {
    capability: r.capability,
    ceilingCents: Number(r.ceiling_cents),
    currency: price.currency,
    now,
  });
  if (violation)
    refuse(services, ctx, violation.code, violation.message, {
      ...(violation.tripwire ? { tripwire: violation.tripwire } : {}),
      intent: { id: r.id, status: 'pending' },
    });
  const cents = Number(r.ceiling_cents);
  const ceilingCents = toCents(m.data.ceiling.amount) ?? 0;
  await q.query(
    `insert into mandate_spend(account_id, principal, mandate_id, digest, currency, ceiling_cents)
     values ($6,$1,$2,$3,$4,$5) on conflict do nothing`,
    [m.data.principal, m.data.id, digestOf(m.data), m.data.ceiling.currency, ceilingCents, account],
  );
  const held = await q.query<{ digest: string; spent_cents: string; ceiling_cents: string }>(
    `select digest, spent_cents, ceiling_cents from mandate_spend
     where account_id = $3 and principal = $1 and mandate_id = $2 for update`,
    [m.data.principal, m.data.id, account],
  );
  if (held.rows[0]!.digest !== digestOf(m.data)) {
    refuse(
      services,
      ctx,
      'invalid-mandate',
      `mandate ${m.data.id} of ${m.data.principal} was first used with other terms; ` +
        'a changed mandate needs a new id',
    );
  }
  const took = await q.query(
    `update mandate_spend set spent_cents = spent_cents + $3, updated_at = now()
     where account_id = $4 and principal = $1 and mandate_id = $2 and spent_cents + $3 <= ceiling_cents`,
    [m.data.principal, m.data.id, cents, account],
  );
  if (took.rowCount === 0) {
    const spent = Number(held.rows[0]!.spent_cents);
    refuse(
      services,
      ctx,
      'mandate-ceiling-exceeded',
      `${r.capability} can cost ${fromCents(cents)} but mandate ${m.data.id} has ` +
        `${fromCents(Number(held.rows[0]!.ceiling_cents) - spent)} of its ` +
        `${m.data.ceiling.amount} ${m.data.ceiling.currency} left; ask the principal for a larger ceiling`,
      {
        mandate: {
          id: m.data.id,
          ceiling: m.data.ceiling,
          spent: { amount: fromCents(spent), currency: m.data.ceiling.currency },
        },
        intent: { id: r.id, status: 'pending' },
      },
    );
  }
  return { account, principal: m.data.principal, id: m.data.id, cents };
}

/**
 * What a mandate reserved for an intent (its ceiling), given back: a part written together with the intent's move
 * (platform `writeTogether`), from the row that part returned under the name `intent`; none for an intent paid
 * without a mandate.
 */
export const refundOf = (intent: string): Sql => ({
  sql: `update mandate_spend m set spent_cents = m.spent_cents - i.ceiling_cents, updated_at = now()
        from ${intent} i
        where m.account_id = i.account_id and m.principal = i.mandate_principal and m.mandate_id = i.mandate_id`,
  params: [],
});
