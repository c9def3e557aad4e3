/**
 * METRICS_PORT moves /metrics off the public port (compose publishes only the API): the built embedded process is
 * started as an operator would, and both ports are asked.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtEntryOf } from '../deploy/launch.ts';
import { freePort, waitFor } from './support/harness.ts';

const root = join(import.meta.dirname, '..');

describe('METRICS_PORT', () => {
  let child: ReturnType<typeof spawn>;
  let api = '',
    metrics = '';
  beforeAll(async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    api = `http://127.0.0.1:${port}`;
    metrics = `http://127.0.0.1:${metricsPort}`;
    child = spawn(process.execPath, [builtEntryOf('embedded')], {
      cwd: root,
      stdio: 'ignore',
      env: {
        ...process.env,
        PGLITE_DIR: 'memory://',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'silent',
      },
    });
    await waitFor(async () => (await fetch(`${api}/healthz`).catch(() => null))?.status === 200, 60_000, 200);
  }, 90_000);
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('serves Prometheus text on its own port, and nothing at /metrics on the public one', async () => {
    const m = await fetch(`${metrics}/metrics`);
    expect(m.status).toBe(200);
    expect(await m.text()).toMatch(/^vcs_process_cpu_seconds_total/m);
    expect((await fetch(`${metrics}/readyz`)).status).toBe(200);
    const pub = await fetch(`${api}/metrics`);
    expect(pub.status).toBe(404);
    expect((await pub.json()).value.code).toBe('not-found');
  });
});
