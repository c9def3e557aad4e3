import type { Queryable, Sql } from '@vcs/platform';

/**
 * Usage that settlements count (table `settlement_usage`, commerce migration 012): one settlement of a capability and
 * the cents it collected, written as a part of the statement that settles it (platform `writeTogether`), only where
 * that statement's settling move wrote (`when`, SQL over its parts, as its events are): exactly once, with the money.
 */
export function settlementCounted(account: string, capability: string, cents: number, when: string): Sql {
  return {
    sql: `insert into settlement_usage(account_id, capability, settlements, charged_cents)
          select $1::text, $2::text, 1, $3::bigint where ${when}
          on conflict (account_id, capability) do update
            set settlements = settlement_usage.settlements + 1,
                charged_cents = settlement_usage.charged_cents + excluded.charged_cents`,
    params: [account, capability, cents],
  };
}

/** What an account's settlements counted, per capability (what `usage.get` answers). */
export async function settlementUsage(q: Queryable, account: string) {
  const { rows } = await q.query<{ capability: string; settlements: string | number; charged_cents: string | number }>(
    'select capability, settlements, charged_cents from settlement_usage where account_id = $1 order by capability',
    [account],
  );
  return rows.map((r) => ({
    capability: r.capability,
    settlements: Number(r.settlements),
    chargedCents: Number(r.charged_cents),
  }));
}
