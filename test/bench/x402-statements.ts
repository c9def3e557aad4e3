/**
 * `pnpm exec tsx test/bench/x402-statements.ts`: how many statements the embedded service sends its store per paid
 * call, on the local x402 rail, with a stock payment (createPayment for the 402's accepts[0]).
 *
 *   BENCH_STATEMENTS_CALLS=20 (paid calls, one at a time); BENCH_STATEMENTS_TEXTS=1 also prints each statement's
 *   text and how often it was sent per paid call
 *
 * Every statement the process sends is counted (`query` on the database and inside each transaction, each
 * transaction's BEGIN and COMMIT, each group-committed batch's statements), split by leg: the 402 leg (the unpaid
 * request that makes the intent), the paid leg (the same request with PAYMENT-SIGNATURE, until its answer), and
 * what follows it (the outbox relay and the event consumers, until the process is settled). The relay's idle polls
 * during the same time are measured first, with no calls, and taken off.
 */
import { createPayment, startRail } from '@vcs/x402-rail';
import { embeddedConfig, startEmbedded } from '@vcs/embedded';
import { createLogger, parseSettings } from '@vcs/platform';
import { countStatements } from '../support/count-statements.ts';
import { railSettings } from '../support/money.ts';

const CALLS = Number(process.env.BENCH_STATEMENTS_CALLS ?? 20);
const VIN = '1HGCM82633A004352';
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

const rail = await startRail({ payers: CALLS + 1 });
const svc = await startEmbedded({
  pgliteDir: 'memory://',
  log: createLogger('bench', 'silent'),
  settings: parseSettings(embeddedConfig, { ...process.env, ...railSettings(rail) }),
});
try {
  const counted = countStatements(svc.infra.db);
  const base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const quote = (headers: Record<string, string> = {}) =>
    fetch(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ vin: VIN }),
    });
  const idleFor = async (ms: number) => {
    await svc.settled();
    const before = counted.n;
    await new Promise((r) => setTimeout(r, ms));
    return counted.n - before;
  };
  // One paid call first, untimed: caches, prepared plans, the first block.
  const paidOnce = async (payer: number) => {
    let c0 = counted.n;
    const offer = await quote();
    const offerLeg = counted.n - c0;
    if (offer.status !== 402) throw new Error(`expected 402, got ${offer.status}: ${await offer.text()}`);
    const required = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(rail.payerKeys[payer]!, required.accepts[0], required.resource);
    c0 = counted.n;
    const t0 = Date.now();
    const paid = await quote({ 'payment-signature': b64(payment) });
    const body = await paid.text();
    if (paid.status !== 200) throw new Error(`expected 200, got ${paid.status}: ${body}`);
    const paidLeg = counted.n - c0;
    c0 = counted.n;
    await svc.settled();
    return { offerLeg, paidLeg, after: counted.n - c0, ms: Date.now() - t0 };
  };
  await paidOnce(CALLS);
  counted.texts.clear();
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
  // BENCH_STATEMENTS_TEXTS=1: each statement's text and how often it was sent per paid call (idle polls included).
  if (process.env.BENCH_STATEMENTS_TEXTS)
    for (const [sql, n] of [...counted.texts].sort((a, b) => b[1] - a[1]))
      console.log(`${per(n).padStart(5)}  ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
} finally {
  await svc.stop();
  await rail.stop();
}
