/**
 * The README's start measured, for `pnpm bench` beside its load rows: the embedded process as `pnpm start`
 * runs it (built JavaScript, the start command's Node flags, PGlite on disk seeded from .data/pglite-seed), started
 * in an empty data directory and again in the same one. For each: time to the first answer, the first decode, the
 * process's peak (VmHWM) and its RSS after `settleSeconds` idle; then the warm decode and /healthz, one request at a
 * time on one keep-alive connection, alternated (p50 and p99 over `calls` of each).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, get } from 'node:http';
import { ensureSeed } from '../../deploy/build.ts';
import { builtEntryOf } from '../../deploy/launch.ts';
import { freePort } from '../support/harness.ts';
import { sleep, stopAll } from './support.ts';

/** The Node flags of the README's start: its script's last line (`exec node <flags> dist/embedded.js`). */
const START_FLAGS = /^exec node (.*) dist\/embedded\.js$/m
  .exec(readFileSync(new URL('../../deploy/start.sh', import.meta.url), 'utf8'))![1]!
  .split(' ');
const VIN = '1HGCM82633A004352';

const statusMb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1]!;

export interface StartFigures {
  start: 'first' | 'restart';
  firstAnswerMs: number;
  firstDecodeMs: number;
  peakMb: number;
  idleMb: number;
  decodeP50Ms: number;
  decodeP99Ms: number;
  healthzP50Ms: number;
  healthzP99Ms: number;
}

/** GET on the keep-alive agent; resolves with the status once the body is read. */
const call = (agent: Agent, url: string) =>
  new Promise<number>((resolve, reject) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });

async function timedCalls(agent: Agent, url: string, calls: number) {
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await call(agent, url);
    ms.push(performance.now() - t);
  }
  return ms;
}

async function once(dir: string, start: StartFigures['start'], settleSeconds: number, calls: number) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PGLITE_DIR: dir,
    LOG_LEVEL: 'silent',
  };
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) delete env[k];
  const t0 = performance.now();
  const child = spawn(process.execPath, [...START_FLAGS, builtEntryOf('embedded')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  let stderr = ''; // what a failed start said, for the error below
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (;;) {
      try {
        if ((await call(agent, `${base}/healthz`)) === 200) break;
      } catch {
        /* not listening yet */
      }
      if (child.exitCode !== null) throw new Error(`embedded (${start}) exited ${child.exitCode}: ${stderr}`);
      await sleep(20);
    }
    const firstAnswerMs = performance.now() - t0;
    const [firstDecodeMs] = await timedCalls(agent, `${base}/decode/${VIN}`, 1);
    await sleep(settleSeconds * 1000);
    const idleMb = statusMb(child.pid!, 'VmRSS');
    // Alternated, one of each in turn, so the machine's drift falls on both alike.
    const decode: number[] = [];
    const healthz: number[] = [];
    for (let i = 0; i < calls; i++) {
      decode.push(...(await timedCalls(agent, `${base}/decode/${VIN}`, 1)));
      healthz.push(...(await timedCalls(agent, `${base}/healthz`, 1)));
    }
    return {
      start,
      firstAnswerMs,
      firstDecodeMs: firstDecodeMs!,
      peakMb: statusMb(child.pid!, 'VmHWM'),
      idleMb,
      decodeP50Ms: pct(decode, 50),
      decodeP99Ms: pct(decode, 99),
      healthzP50Ms: pct(healthz, 50),
      healthzP99Ms: pct(healthz, 99),
    } satisfies StartFigures;
  } finally {
    agent.destroy();
    await stopAll([child]);
  }
}

/** A first start in an empty directory, then a restart in it. */
export async function startFigures(settleSeconds: number, calls = 500): Promise<StartFigures[]> {
  // The start measured is the README's: `pnpm start` builds the seed first, so a first start copies it.
  await ensureSeed();
  const dir = mkdtempSync(join(tmpdir(), 'vcs-start-'));
  try {
    return [await once(dir, 'first', settleSeconds, calls), await once(dir, 'restart', settleSeconds, calls)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printStartFigures(rows: StartFigures[]) {
  console.log(
    '\nembedded start (pnpm start, PGlite on disk): ms, MB; warm calls one at a time on a keep-alive connection\n',
  );
  const cols = [
    'start',
    'first answer ms',
    'first decode ms',
    'peak MB',
    'idle MB',
    'decode p50/p99 ms',
    'healthz p50/p99 ms',
  ];
  console.log(cols.join('\t'));
  for (const r of rows)
    console.log(
      [
        r.start,
        r.firstAnswerMs.toFixed(0),
        r.firstDecodeMs.toFixed(1),
        r.peakMb.toFixed(0),
        r.idleMb.toFixed(0),
        `${r.decodeP50Ms.toFixed(2)}/${r.decodeP99Ms.toFixed(2)}`,
        `${r.healthzP50Ms.toFixed(2)}/${r.healthzP99Ms.toFixed(2)}`,
      ].join('\t'),
    );
}
