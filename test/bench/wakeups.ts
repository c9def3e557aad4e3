/**
 * `pnpm bench:wakeups`: what one hop costs this machine in CPU, apart from any work done at either end: a timer's
 * wake-up, a Postgres statement, a NATS request-reply and a message to a worker thread and back, each once
 * back to back and once with both ends idle in between (as between the steps of a paid call, which wait on the
 * chain). Both ends of the NATS and worker hops are in this process; Postgres's and nats-server's own CPU is not
 * counted, as the paid-call bench does not count it. Not a test.
 *
 *   DATABASE_URL and NATS_URL (each hop is skipped without its server); BENCH_WAKEUPS=2000 (hops per row)
 */
import { Worker } from 'node:worker_threads';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { sleep } from './support.ts';

const N = Number(process.env.BENCH_WAKEUPS ?? 2000);
const IDLE_MS = 5;
const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
const IDLE_N = Math.max(50, Math.floor(N / 4));
/** CPU µs of one idle wait of IDLE_MS: the timer, and the wake-up of an event loop that had nothing to do. */
async function idleWait() {
  const t = cpuUs();
  for (let i = 0; i < IDLE_N; i++) await sleep(IDLE_MS);
  return (cpuUs() - t) / IDLE_N;
}
/** CPU µs per call of `hop`: back to back, and after IDLE_MS of idleness each (the idle wait's own cost taken off). */
async function measure(hop: () => Promise<unknown>, waitUs: number) {
  for (let i = 0; i < 200; i++) await hop(); // warm
  let t = cpuUs();
  for (let i = 0; i < N; i++) await hop();
  const busy = (cpuUs() - t) / N;
  t = cpuUs();
  for (let i = 0; i < IDLE_N; i++) {
    await sleep(IDLE_MS);
    await hop();
  }
  return { busy, idle: (cpuUs() - t) / IDLE_N - waitUs };
}
const row = (what: string, m: { busy: number; idle: number }) =>
  console.log(`${what}\t${m.busy.toFixed(0)}\t${m.idle.toFixed(0)}`);

const body = 'x'.repeat(1000);
console.log(`CPU µs per hop: ${N} back to back, and ${IDLE_N} each after ${IDLE_MS} ms with nothing to do`);
console.log('hop\tback to back\tafter idle');
const wait = await idleWait();
console.log(`an idle event loop woken by its timer\t\t${wait.toFixed(0)}`);

const worker = new Worker(
  'const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m));',
  {
    eval: true,
  },
);
const waiting: ((v: unknown) => void)[] = [];
worker.on('message', (m) => waiting.shift()?.(m));
row(
  'a message to a worker thread and back (both threads)',
  await measure(() => new Promise((r) => (waiting.push(r), worker.postMessage(body))), wait),
);
await worker.terminate();

if (process.env.DATABASE_URL) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  row(
    'a Postgres statement (pg, this end only)',
    await measure(() => client.query('select $1::text as a', [body]), wait),
  );
  await client.end();
}

if (process.env.NATS_URL) {
  const [caller, server] = [
    await connect({ servers: process.env.NATS_URL }),
    await connect({ servers: process.env.NATS_URL }),
  ];
  const answer = new TextEncoder().encode(body);
  server.subscribe('bench.wakeups', {
    callback: (_e, m) => {
      m.respond(answer);
    },
  });
  await server.flush();
  row('a NATS request-reply (both ends)', await measure(() => caller.request('bench.wakeups', answer), wait));
  await caller.close();
  await server.close();
}
