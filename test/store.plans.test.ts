import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDb, migrate, ownMigrations, type Db } from '@vcs/platform';
import { DUE_EXECUTIONS_SQL } from '../services/commerce/src/money/executions.ts';
import { REREAD_SQL } from '../services/commerce/src/money/intents.ts';
import { LOOKED_SQL } from '../services/commerce/src/money/paidCall/looked.ts';
import { OPEN_PAYMENTS_SQL } from '../services/commerce/src/money/reconciler.ts';
import { distributedEnv, dropStores, freshStores } from './support/harness.ts';

const env = distributedEnv();
const commerce = ownMigrations('commerce', new URL('../services/commerce/src/index.ts', import.meta.url).href);
const INPUT = JSON.stringify({ vin: '1HGCM82633A004352' });

// Statements prepared once and run with a generic plan (the embedded store prepares every text; Postgres may choose
// one): a partial index on some states is used only where those states are in the statement's text. These read
// through theirs however long the history: the paid call's first read (an answer owed to the wallet, commerce
// migration 010), the reconciler's two passes, every second in every commerce process, and a wallet's
// sign-in-with-x read (its own payments only, migration 011).
describe.skipIf(!env)('statements that read through a partial index, on a long history (Postgres)', () => {
  let stores: Record<string, string>;
  let db: Db;
  beforeAll(async () => {
    stores = await freshStores();
    db = createPgDb(stores.DATABASE_URL!, 2);
    await migrate(db, [commerce]);
    // 3,000 paid and delivered answers of one wallet (their executions finished), and one it paid for and never got.
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
    await db.query(
      `insert into executions(id, source, source_id, capability, input, ctx, status, created_at)
       select 'exe_' || g, 'intent', 'int_' || g, 'signing.quote', $1::jsonb, '{}', 'succeeded', now()
         from generate_series(0, 3000) g`,
      [INPUT],
    );
    await db.query('analyze');
  });
  afterAll(async () => {
    await db?.close();
    if (stores) await dropStores(stores);
  });

  /** A prepared statement's generic plan, run: its rows and each node reading `table`'s rows. */
  async function generic(sql: string, types: string, args: string, table: string) {
    const client = new pg.Client({ connectionString: stores.DATABASE_URL });
    await client.connect();
    try {
      await client.query('set plan_cache_mode = force_generic_plan');
      await client.query(`prepare s(${types}) as ${sql}`);
      const { rows } = await client.query(`execute s(${args})`);
      const plan = JSON.stringify((await client.query(`explain (analyze, format json) execute s(${args})`)).rows);
      const read = [...plan.matchAll(new RegExp(`"Relation Name":"${table}"[^}]*?"Actual Rows":(\\d+)`, 'g'))];
      return { rows, plan, read: read.map((m) => Number(m[1])) };
    } finally {
      await client.end();
    }
  }

  it("the paid call's first read finds the one owed answer through the owed index, not every payment", async () => {
    const r = await generic(
      LOOKED_SQL,
      'text, text, text, text, text, text, text, jsonb',
      `'eip155:84532', '0xasset', '0xWALLET', 'a-new-nonce', null, null, 'signing.quote', '${INPUT}'`,
      'payments',
    );
    expect(r.rows.map((x) => [x.kind, x.payment?.id])).toEqual([['owed', 'pay_3000']]);
    expect(r.plan).toContain('"Index Name":"payments_owed"');
    expect(r.read.length).toBeGreaterThan(0);
    expect(Math.max(...r.read)).toBeLessThanOrEqual(1);
  });

  it("a wallet's sign-in-with-x read looks through that wallet's payments, not every wallet's", async () => {
    // 3,000 more wallets, each with one paid answer of the same capability and input.
    await db.query(
      `insert into intents(id, capability, input, price, ceiling, ceiling_cents, status, expires_at, settled_at,
         delivered_at, payment_id)
       select 'int_w' || g, 'signing.quote', $1::jsonb, '{}', '{}', 100, 'settled', now(), now(), now(), 'pay_w' || g
         from generate_series(0, 2999) g`,
      [INPUT],
    );
    await db.query(
      `insert into payments(id, intent_id, network, asset, pay_to, payer, nonce, amount_atomic, valid_before,
         x402_version, payload, requirements, status, created_at, updated_at, delivered_at)
       select 'pay_w' || g, 'int_w' || g, 'eip155:84532', '0xAsset', '0xPayTo', '0xWallet' || g, 'nonce-w' || g, '1',
              '1', 2, '{}', '{}', 'settled', now(), now(), now()
         from generate_series(0, 2999) g`,
    );
    await db.query('analyze');
    const r = await generic(
      REREAD_SQL,
      'text, text, text, text',
      `'signing.quote', '${INPUT}', '0XWALLET1234', 'settled'`,
      'payments',
    );
    expect(r.rows.map((x) => x.id)).toEqual(['int_w1234']);
    expect(r.plan).toContain('"Index Name":"payments_payer"');
    expect(r.read.length).toBeGreaterThan(0);
    expect(Math.max(...r.read)).toBeLessThanOrEqual(1);
  });

  it("the reconciler's passes read only what is open, through their indexes", async () => {
    await db.query(
      `update payments set status = 'unknown', delivered_at = null where id = 'pay_3000';
       update executions set status = 'running', lease_until = now() - interval '1 minute' where id = 'exe_3000'`,
    );
    await db.query('analyze');
    const payments = await generic(OPEN_PAYMENTS_SQL, 'timestamptz', 'now()', 'payments');
    expect(payments.rows).toEqual([{ id: 'pay_3000' }]);
    expect(payments.plan).toContain('"Index Name":"payments_open"');
    expect(payments.read.length).toBeGreaterThan(0);
    expect(Math.max(...payments.read)).toBeLessThanOrEqual(1);
    const executions = await generic(DUE_EXECUTIONS_SQL, 'timestamptz', 'now()', 'executions');
    expect(executions.rows).toEqual([{ id: 'exe_3000', source: 'intent', paid: false }]);
    expect(executions.plan).toContain('"Index Name":"executions_due"');
    expect(executions.read.length).toBeGreaterThan(0);
    expect(Math.max(...executions.read)).toBeLessThanOrEqual(1);
  });
});
