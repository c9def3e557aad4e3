import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The compose file must validate wherever the compose client exists (no engine needed for `config`). */
const file = new URL('../deploy/docker-compose.yml', import.meta.url).pathname;
const compose = (() => {
  for (const [cmd, pre] of [['docker', ['compose']], ['docker-compose', []]] as const) {
    const r = spawnSync(cmd, [...pre, 'version'], { encoding: 'utf8' });
    if (r.status === 0) return { cmd, pre: [...pre] };
  }
  return null;
})();

describe('deploy/', () => {
  // Outside CI a machine without a compose client skips this, saying so; in CI (.ci/run installs the client) its
  // absence fails: a check that quietly passes without running is no check.
  it.skipIf(!compose && !process.env.CI)('docker compose config validates deploy/docker-compose.yml', () => {
    if (!compose) throw new Error('neither `docker compose` nor `docker-compose` is installed; .ci/run installs Debian\'s docker-compose');
    const r = spawnSync(compose.cmd, [...compose.pre, '-f', file, 'config', '--quiet'], { encoding: 'utf8', env: { ...process.env, REPLICAS_SERVICES: '3', POSTGRES_PASSWORD: 'p', CONNECTION_ENCRYPTION_KEY: 'k' } });
    expect(r.status, r.stderr).toBe(0);
    // Without the secrets it refuses, naming the one that is missing (no silent default password or dev key).
    const bare = { ...process.env };
    delete bare.POSTGRES_PASSWORD; delete bare.CONNECTION_ENCRYPTION_KEY;
    const refused = spawnSync(compose.cmd, [...compose.pre, '-f', file, 'config', '--quiet'], { encoding: 'utf8', env: { ...bare, POSTGRES_PASSWORD: 'p' } });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/CONNECTION_ENCRYPTION_KEY/);
  });

  it('declares every service with a healthcheck, and each pillar with an operator-set replica count', () => {
    const text = readFileSync(file, 'utf8');
    for (const s of ['nats', 'postgres', 'redis', 'gateway', 'data', 'services-pillar', 'commerce', 'workflows']) expect(text).toMatch(new RegExp(`^  ${s}:$`, 'm'));
    for (const p of ['DATA', 'SERVICES', 'COMMERCE', 'WORKFLOWS']) expect(text).toContain(`replicas: "\${REPLICAS_${p}:-1}"`);
    expect(text).toMatch(/-js/);
    expect(text).toMatch(/nats-data:\/data/);
    expect(readFileSync(new URL('../deploy/Dockerfile', import.meta.url), 'utf8')).toMatch(/^USER node$/m);
  });

  it('ships the Node LTS that CI also runs the suites on', () => {
    const image = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(readFileSync(new URL('../deploy/Dockerfile', import.meta.url), 'utf8'))?.[1];
    const ci = /-p node@(\d+\.\d+\.\d+)/.exec(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8'))?.[1];
    expect(image).toMatch(/^(22|24)\./); // a supported LTS, not the end-of-life 20
    expect(ci).toBe(image);
    expect(readFileSync(new URL('../deploy/docker-compose.yml', import.meta.url), 'utf8')).toContain(`node:${image}-`);
  });
});
