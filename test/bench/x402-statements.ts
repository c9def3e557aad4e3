/**
 * `pnpm exec tsx test/bench/x402-statements.ts`: how many statements the embedded service sends its store per paid
 * call, on the local x402 rail, with a stock payment (createPayment for the 402's accepts[0]).
 *
 *   BENCH_STATEMENTS_CALLS=20 (paid calls, one at a time)
 *
 * Every statement the process sends is counted (`query` on the database and inside each transaction, each
 * transaction's BEGIN and COMMIT, each group-committed batch's statements), split by leg: the 402 leg (the unpaid
 * request that makes the intent), the paid leg (the same request with PAYMENT-SIGNATURE, until its answer), and
 * what follows it (the outbox relay and the event consumers, until the process is settled). The relay's idle polls
 * during the same time are measured first, with no calls, and taken off.
 */
import { createPayment, startRail } from '@vcs/x402-rail';
import { embeddedConfig, startEmbedded } from '@vcs/embedded';
import { createLogger, mergeWrites, parseSettings, type Db, type Queryable } from '@vcs/platform';
import { railSettings } from '../support/money.ts';

const CALLS = Number(process.env.BENCH_STATEMENTS_CALLS ?? 20);
const VIN = '1HGCM82633A004352';
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

let count = 0;
/** Count every statement `db` is sent, in place (the pillars hold this same object). */
function counting(db: Db) {
  const query = db.query.bind(db);
  const tx = db.tx.bind(db);
  const batch = db.batch.bind(db);
  const inner = (q: Queryable): Queryable => ({
    ...q,
    query: (sql, params) => {
      count++;
      return q.query(sql, params);
    },
  });
  db.query = ((sql: string, params?: unknown[]) => {
    count++;
    return query(sql, params);
  }) as Db['query'];
  db.tx = (<T>(fn: (q: Queryable) => Promise<T>) => {
    count += 2; // BEGIN, COMMIT
    return tx((q) => fn(inner(q)));
  }) as Db['tx'];
  db.batch = ((statements: Parameters<Db['batch']>[0]) => {
    // As the store runs them: bulk rows merged; one statement alone, several in a transaction (BEGIN, COMMIT).
    const merged = mergeWrites(statements).length;
    count += merged + (merged > 1 ? 2 : 0);
    return batch(statements);
  }) as Db['batch'];
}

const rail = await startRail({ payers: CALLS + 1 });
const svc = await startEmbedded({
  pgliteDir: 'memory://',
  log: createLogger('bench', 'silent'),
  settings: parseSettings(embeddedConfig, { ...process.env, ...railSettings(rail) }),
});
try {
  counting(svc.infra.db);
  const base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const quote = (headers: Record<string, string> = {}) =>
    fetch(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ vin: VIN }),
    });
  const idleFor = async (ms: number) => {
    await svc.settled();
    const before = count;
    await new Promise((r) => setTimeout(r, ms));
    return count - before;
  };
  // One paid call first, untimed: caches, prepared plans, the first block.
  const paidOnce = async (payer: number) => {
    let c0 = count;
    const offer = await quote();
    const offerLeg = count - c0;
    if (offer.status !== 402) throw new Error(`expected 402, got ${offer.status}: ${await offer.text()}`);
    const required = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(rail.payerKeys[payer]!, required.accepts[0], required.resource);
    c0 = count;
    const t0 = Date.now();
    const paid = await quote({ 'payment-signature': b64(payment) });
    const body = await paid.text();
    if (paid.status !== 200) throw new Error(`expected 200, got ${paid.status}: ${body}`);
    const paidLeg = count - c0;
    c0 = count;
    await svc.settled();
    return { offerLeg, paidLeg, after: count - c0, ms: Date.now() - t0 };
  };
  await paidOnce(CALLS);
  const t0 = Date.now();
  const legs: Awaited<ReturnType<typeof paidOnce>>[] = [];
  for (let i = 0; i < CALLS; i++) legs.push(await paidOnce(i));
  const took = Date.now() - t0;
  const idle = await idleFor(took);
  const sum = (k: 'offerLeg' | 'paidLeg' | 'after') => legs.reduce((a, l) => a + l[k], 0);
  const per = (n: number) => (n / CALLS).toFixed(1);
  console.log(`paid calls: ${CALLS}, one at a time, ${took} ms in all; idle statements over the same time: ${idle}`);
  console.log(
    `statements per paid call: 402 leg ${per(sum('offerLeg'))}, paid leg ${per(sum('paidLeg'))}, ` +
      `after the answer ${per(sum('after'))}; in all ${per(sum('offerLeg') + sum('paidLeg') + sum('after') - idle)} ` +
      '(idle polls taken off)',
  );
} finally {
  await svc.stop();
  await rail.stop();
}
