import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { builtEntryOf, NODE_FLAGS } from '../../deploy/launch.ts';
import { freePort, waitFor } from './harness.ts';

const root = join(import.meta.dirname, '../..');

/**
 * The built embedded service (dist/embedded.js) as a process of its own, with only PATH, HOME, PORT and `env` set,
 * once it answers /healthz. Its stderr is kept, to say why it did not start.
 */
export async function startEmbeddedProcess(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, builtEntryOf('embedded')], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const base = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${base}/healthz`)).ok, 90_000, 200).catch((e) => {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}: the service said ${err}`);
  });
  return { child, base };
}
