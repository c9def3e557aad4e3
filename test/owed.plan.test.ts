import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDb, migrate, ownMigrations, type Db } from '@vcs/platform';
import { LOOKED_SQL } from '../services/commerce/src/money/pay.ts';
import { distributedEnv, dropStores, freshStores } from './support/harness.ts';

const env = distributedEnv();
const commerce = ownMigrations('commerce', new URL('../services/commerce/src/index.ts', import.meta.url).href);
const INPUT = JSON.stringify({ vin: '1HGCM82633A004352' });

// The paid call's first read looks for an answer owed to the wallet among its payments whose answer it has not
// received (commerce migration 010), however many it made before: the statement is prepared once and run with a
// generic plan, which may use the partial index only where the states are in its text.
describe.skipIf(!env)("the paid call's first read, on a wallet with a long history (Postgres)", () => {
  let stores: Record<string, string>;
  let db: Db;
  beforeAll(async () => {
    stores = await freshStores();
    db = createPgDb(stores.DATABASE_URL!, 2);
    await migrate(db, [commerce]);
    // 3,000 paid and delivered answers of one wallet, and one it paid for and never got.
    await db.query(
      `insert into intents(id, capability, input, price, ceiling, ceiling_cents, status, expires_at, delivered_at)
       select 'int_' || g, 'signing.quote', $1::jsonb, '{}', '{}', 100, 'settled', now(),
              case when g < 3000 then now() end
         from generate_series(0, 3000) g`,
      [INPUT],
    );
    await db.query(
      `insert into payments(id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before,
         x402_version, payload, requirements, status, created_at, updated_at, delivered_at)
       select 'pay_' || g, 'int_' || g, 'eip155:84532', '0xAsset', '0xPayTo', '0xWallet', 'nonce' || g, '1', '1',
              2, '{}', '{}', 'settled', now(), now(), case when g < 3000 then now() end
         from generate_series(0, 3000) g`,
    );
    await db.query('analyze');
  });
  afterAll(async () => {
    await db?.close();
    if (stores) await dropStores(stores);
  });

  it("finds the one owed answer through the owed index, not by reading the wallet's every payment", async () => {
    const client = new pg.Client({ connectionString: stores.DATABASE_URL });
    await client.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare looked(text, text, text, text, text, text, text, jsonb) as ${LOOKED_SQL}`);
      const args = `'eip155:84532', '0xasset', '0xWALLET', 'a-new-nonce', null, null, 'signing.quote', '${INPUT}'`;
      const { rows } = await client.query(`execute looked(${args})`);
      expect(rows.map((r) => [r.kind, r.payment?.id])).toEqual([['owed', 'pay_3000']]);
      const plan = JSON.stringify((await client.query(`explain (analyze, format json) execute looked(${args})`)).rows);
      expect(plan).toContain('"Index Name":"payments_owed"');
      // Each node's rows: none reads more than a handful of payments.
      const read = [...plan.matchAll(/"Relation Name":"payments"[^}]*?"Actual Rows":(\d+)/g)].map((m) => Number(m[1]));
      expect(read.length).toBeGreaterThan(0);
      expect(Math.max(...read)).toBeLessThanOrEqual(1);
    } finally {
      await client.end();
    }
  });
});
