/**
 * `npx tsx test/bench/one-row.ts`: what one row of a bulk write costs the embedded store in its one-row form
 * (`BulkWrite.one`, a plain `insert … values`) and through the arrays' `unnest` (`BulkWrite.sql`), and a row of a
 * five-row group through the arrays: timed from the caller (the round trip to the store thread included), one group
 * at a time, the forms alternated in each round. The write is the 402 leg's intent, on commerce's own tables (its migrations).
 *
 *   BENCH_ONE_ROW_WRITES=3000 (writes a form, a round); BENCH_ONE_ROW_ROUNDS=4
 */
import { createPgliteDb, mergeWrites, migrate, ownMigrations, type BulkWrite } from '@vcs/platform';
import { INTENT_INSERT } from '../../services/commerce/src/money/intents.ts';

const WRITES = Number(process.env.BENCH_ONE_ROW_WRITES ?? 3000);
const ROUNDS = Number(process.env.BENCH_ONE_ROW_ROUNDS ?? 4);

/** The intent's write as commerce sends it (both forms), and the same without its one-row form. */
const oneRow = INTENT_INSERT;
const arrays: BulkWrite = { sql: INTENT_INSERT.sql };

let n = 0;
const row = () => {
  const now = new Date();
  return [
    `pi_${++n}`,
    null,
    'signing.quote',
    '{"vin":"1HGCM82633A004352"}',
    null,
    null,
    '{"amount":"1.00","currency":"USD"}',
    '{"amount":"1.00","currency":"USD"}',
    '100',
    new Date(now.getTime() + 900_000).toISOString(),
    now.toISOString(),
  ];
};

const db = await createPgliteDb('memory://');
try {
  await migrate(db, [ownMigrations('commerce', new URL('../../services/commerce/src/index.ts', import.meta.url).href)]);
  /** µs a row: `groups` groups of `size` rows of `write`, each merged as group commit merges it and sent alone. */
  const timed = async (write: BulkWrite, size: number, groups: number) => {
    const t0 = performance.now();
    for (let g = 0; g < groups; g++)
      for (const st of mergeWrites(Array.from({ length: size }, () => ({ bulk: write, row: row() }))))
        await db.query(st.sql, st.params);
    return ((performance.now() - t0) * 1000) / (groups * size);
  };
  console.log('round\tone row, one-row form µs\tone row, arrays µs\tfive rows, arrays µs a row');
  for (let r = 1; r <= ROUNDS; r++) {
    const one = await timed(oneRow, 1, WRITES);
    const viaArrays = await timed(arrays, 1, WRITES);
    const five = await timed(arrays, 5, Math.ceil(WRITES / 5));
    console.log(`${r}\t${one.toFixed(0)}\t${viaArrays.toFixed(0)}\t${five.toFixed(0)}`);
  }
} finally {
  await db.close();
}
