import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVICES } from '../deploy/services.ts';

/** The compose file must validate wherever the compose client exists (no engine needed for `config`). */
const file = new URL('../deploy/docker-compose.yml', import.meta.url).pathname;
const compose = (() => {
  for (const [cmd, pre] of [
    ['docker', ['compose']],
    ['docker-compose', []],
  ] as const) {
    const r = spawnSync(cmd, [...pre, 'version'], { encoding: 'utf8' });
    if (r.status === 0) return { cmd, pre: [...pre] };
  }
  return null;
})();

describe('deploy/', () => {
  // Outside CI a machine without a compose client skips this, saying so; in CI (.ci/run installs the client) its
  // absence fails: a check that quietly passes without running is no check.
  it.skipIf(!compose && !process.env.CI)('docker compose config validates deploy/docker-compose.yml', () => {
    if (!compose)
      throw new Error(
        "neither `docker compose` nor `docker-compose` is installed; .ci/run installs Debian's docker-compose",
      );
    const r = spawnSync(compose.cmd, [...compose.pre, '-f', file, 'config', '--quiet'], {
      encoding: 'utf8',
      env: { ...process.env, REPLICAS_SERVICES: '3', POSTGRES_PASSWORD: 'p', CONNECTION_ENCRYPTION_KEY: 'k' },
    });
    expect(r.status, r.stderr).toBe(0);
    // No default for either secret: unset where compose runs, they are unset in the containers too (the services
    // pillar then stops naming CONNECTION_ENCRYPTION_KEY; Postgres will not make its database without a password).
    const bare = { ...process.env };
    delete bare.POSTGRES_PASSWORD;
    delete bare.CONNECTION_ENCRYPTION_KEY;
    delete bare.VCS_SECRETS_DIR;
    const render = (files: string[], env: NodeJS.ProcessEnv) =>
      spawnSync(compose.cmd, [...compose.pre, ...files.flatMap((f) => ['-f', f]), 'config', '--format', 'json'], {
        encoding: 'utf8',
        env,
      });
    const plain = JSON.parse(render([file], bare).stdout);
    expect(plain.services['services-pillar'].environment.CONNECTION_ENCRYPTION_KEY ?? null).toBeNull();
    expect(plain.services.postgres.environment.POSTGRES_PASSWORD ?? null).toBeNull();
    // From files (Docker secrets): the override needs the directory, and then passes only the *_FILE paths, even
    // when a value is still set in the shell.
    const secrets = new URL('../deploy/docker-compose.secrets.yml', import.meta.url).pathname;
    const refused = render([file, secrets], bare);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/VCS_SECRETS_DIR/);
    const filed = JSON.parse(
      render([file, secrets], { ...bare, VCS_SECRETS_DIR: '/etc/vcs/secrets', CONNECTION_ENCRYPTION_KEY: 'left-over' })
        .stdout,
    );
    const pillar = filed.services['services-pillar'];
    expect(pillar.environment).toMatchObject({
      CONNECTION_ENCRYPTION_KEY_FILE: '/run/secrets/connection_encryption_key',
      DATABASE_URL_FILE: '/run/secrets/database_url',
    });
    expect(Object.keys(pillar.environment)).not.toContain('CONNECTION_ENCRYPTION_KEY');
    for (const s of ['gateway', 'data', 'commerce', 'workflows'])
      expect(Object.keys(filed.services[s].environment)).not.toContain('DATABASE_URL');
    expect(filed.services.postgres.environment).toMatchObject({
      POSTGRES_PASSWORD_FILE: '/run/secrets/postgres_password',
    });
    // PgBouncer logs in with the same password file; the gateway signs with its key file, and it and commerce read
    // the facilitator's and the chain node's URLs from files (an empty one: payments off).
    expect(filed.services.pgbouncer.environment).toMatchObject({ DB_PASSWORD_FILE: '/run/secrets/postgres_password' });
    expect(Object.keys(filed.services.pgbouncer.environment)).not.toContain('DB_PASSWORD');
    for (const s of ['gateway', 'commerce']) {
      expect(filed.services[s].environment).toMatchObject({
        X402_FACILITATOR_URL_FILE: '/run/secrets/x402_facilitator_url',
        X402_RPC_URL_FILE: '/run/secrets/x402_rpc_url',
      });
      expect(Object.keys(filed.services[s].environment)).not.toContain('X402_FACILITATOR_URL');
    }
    expect(filed.services.gateway.environment).toMatchObject({
      X402_RECEIPT_SIGNING_KEY_FILE: '/run/secrets/x402_receipt_signing_key',
    });
    expect(filed.secrets.database_url.file).toBe('/etc/vcs/secrets/database_url');
  });

  it('declares every service with a healthcheck, and each pillar with an operator-set replica count', () => {
    const text = readFileSync(file, 'utf8');
    // Each pillar's service and replica count: test/pillars.test.ts.
    for (const s of ['nats-2', 'nats-3', 'postgres', 'pgbouncer', 'redis', ...SERVICES])
      expect(text).toMatch(new RegExp(`^  ${s}:$`, 'm'));
    // A three-node NATS cluster: each node with JetStream, its own volume and routes to the other two;
    // every process gets the seed list and a 3-replica stream.
    expect(text).toMatch(/^  nats-1: &nats$/m);
    for (const n of [1, 2, 3]) {
      expect(text).toMatch(new RegExp(`nats-${n}-data:/data`));
      expect(text).toMatch(new RegExp(`"--name", "nats-${n}", "-js"`));
    }
    expect(text).toMatch(/NATS_URL: nats:\/\/nats-1:4222,nats:\/\/nats-2:4222,nats:\/\/nats-3:4222/);
    expect(text).toMatch(/EVENT_STREAM_REPLICAS: \$\{EVENT_STREAM_REPLICAS:-3\}/);
    // Every process reaches Postgres through PgBouncer (docs/operations.md, "Connections: PgBouncer").
    expect(text).toMatch(/DATABASE_URL: postgres:\/\/vcs:\$\{POSTGRES_PASSWORD:-\}@pgbouncer:5432\/vcs$/m);
    expect(text).not.toMatch(/@postgres:5432/);
    expect(readFileSync(new URL('../deploy/Dockerfile', import.meta.url), 'utf8')).toMatch(/^USER node$/m);
  });

  it('ships the Node LTS that CI also runs the suites on', () => {
    const image = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(
      readFileSync(new URL('../deploy/Dockerfile', import.meta.url), 'utf8'),
    )?.[1];
    const ci = /-p node@(\d+\.\d+\.\d+)/.exec(readFileSync(new URL('../.ci/run', import.meta.url), 'utf8'))?.[1];
    expect(image).toMatch(/^(22|24)\./); // a supported LTS, not the end-of-life 20
    expect(ci).toBe(image);
    expect(readFileSync(new URL('../deploy/docker-compose.yml', import.meta.url), 'utf8')).toContain(`node:${image}-`);
  });
});
