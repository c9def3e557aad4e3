import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { builtEntryOf, NODE_FLAGS } from '../../deploy/launch.ts';
import { freePort, waitFor } from './harness.ts';

/** Where the built embedded service runs from, and its Node arguments. */
export const EMBEDDED_CWD = join(import.meta.dirname, '../..');
export const EMBEDDED_ARGS = [...NODE_FLAGS, builtEntryOf('embedded')];

/** Its environment: only PATH, HOME, PORT, a quiet log and `env`. */
export const embeddedEnv = (port: number, env: Record<string, string>) => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  PORT: String(port),
  LOG_LEVEL: 'warn',
  ...env,
});

/**
 * The built embedded service (dist/embedded.js) as a process of its own, with `embeddedEnv`, once it answers
 * /healthz. Its stderr is kept, to say why it did not start.
 */
export async function startEmbeddedProcess(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, EMBEDDED_ARGS, {
    cwd: EMBEDDED_CWD,
    env: embeddedEnv(port, env),
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
