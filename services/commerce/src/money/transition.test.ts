import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycles } from '@vcs/contract';
import { createPgliteDb, migrate, ownMigrations, type Db } from '@vcs/platform';
import { move } from './transition.ts';

/**
 * The table walked against commerce's real tables (its migrations, on PGlite): for every state × event, a row in
 * that state is moved exactly when the table lists the move, to the state it names; otherwise it is left untouched.
 */
const stored = ['intent', 'payment', 'execution', 'handoff', 'key'] as const;

describe('money/transition.ts: a status is written only through the table', () => {
  let db: Db;
  beforeAll(async () => {
    db = await createPgliteDb('memory://');
    await migrate(db, [ownMigrations('commerce', new URL('../index.ts', import.meta.url).href)]);
    await db.query(
      `insert into accounts(id, environment, trust_tier, created_at) values ('acct', 'sandbox', 'anonymous', now())`,
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  async function rowIn(entity: (typeof stored)[number], id: string, status: string) {
    const t = lifecycles[entity].table;
    await db.query(`delete from ${t} where id = $1`, [id]);
    const insert: Record<string, string> = {
      intents: `insert into intents(id, capability, input, price, ceiling, ceiling_cents, status, expires_at)
        values ($1, 'signing.quote', '{}', '{}', '{}', 0, $2, now())`,
      payments: `insert into payments(id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before,
        x402_version, payload, requirements, status, created_at, updated_at)
        values ($1, $1, 'n', 'a', 'p', $1, 'nonce', '1', '1', 2, '{}', '{}', $2, now(), now())`,
      executions: `insert into executions(id, source, source_id, capability, input, ctx, status, created_at)
        values ($1, 'intent', $1, 'signing.quote', '{}', '{}', $2, now())`,
      handoffs: `insert into handoffs(id, verb, credential, terminus, status) values ($1, 'sign', 'signer', '{}', $2)`,
      api_keys: `insert into api_keys(id, account_id, prefix, secret_hash, scopes, trust_tier, status, created_at)
        values ($1, 'acct', $1, '\\x00', '{}', 'anonymous', $2, now())`,
    };
    await db.query(insert[t]!, [id, status]);
  }

  for (const entity of stored) {
    it(`${entity}: every state × event, on the real table`, async () => {
      const l = lifecycles[entity];
      const events = [...new Set(l.transitions.map((t) => t.event))];
      let moved = 0;
      for (const from of l.states)
        for (const event of events) {
          const id = `${entity}-${from}-${event}`;
          await rowIn(entity, id, from);
          const t = l.transitions.find((x) => x.event === event)!;
          const row = await move<{ status: string }, typeof entity>(db, entity, id, event as never);
          const now = (await db.query<{ status: string }>(`select status from ${l.table} where id = $1`, [id]))
            .rows[0]!;
          if ((t.from as readonly string[]).includes(from)) {
            expect(row?.status, `${from} --${event}-->`).toBe(t.to);
            moved++;
          } else {
            expect(row, `${from} --${event}--> must not move`).toBeUndefined();
            expect(now.status).toBe(from);
          }
        }
      expect(moved).toBeGreaterThan(0);
    });
  }
});
