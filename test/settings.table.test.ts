/**
 * README's settings table is the operator's list of everything the processes read: it must name every setting of
 * every process's one schema (parsed once at start), and nothing that no process reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pillarProcessConfig } from '@vcs/platform';
import { allPillars, embeddedConfig } from '@vcs/embedded';
import { parse } from 'yaml';
import { documentedSettings, NOT_DEPLOYED, REPLICA_SETTING } from './support/documented-settings.ts';

const root = join(import.meta.dirname, '..');
/** The setting names in the first column of the tables under a file's `## Settings`. */
const namesIn = (file: string) => {
  const text = readFileSync(join(root, file), 'utf8');
  const section = text.slice(text.indexOf('\n## Settings')).split(/\n## (?!Settings)/)[0]!;
  return new Set([...section.matchAll(/^\| `([A-Z0-9_<>*]+)`/gm)].map((m) => m[1]!));
};

describe('settings', () => {
  const schemas = [embeddedConfig, pillarProcessConfig, ...allPillars.flatMap((p) => (p.settings ? [p.settings] : []))];
  const read = new Set(schemas.flatMap((s) => Object.keys(s.shape)));
  // Read outside a process schema: the launcher's replica counts, the build's cache (deploy/build-cache.ts).
  const elsewhere = new Set(['REPLICAS_<PILLAR>', 'WEBHOOK_*', 'BUILD_CACHE_DIR']);

  it('README names every setting a process reads (WEBHOOK_* in docs/webhooks.md), and none it does not', () => {
    const readme = namesIn('README.md');
    const webhooks = namesIn('docs/webhooks.md');
    const documented = new Set([...readme, ...webhooks]);
    expect(
      [...read].filter((k) => !documented.has(k)),
      'settings no table names',
    ).toEqual([]);
    expect(
      [...readme].filter((k) => !read.has(k) && !elsewhere.has(k)),
      'README rows no process reads',
    ).toEqual([]);
  });

  it('every documented setting has its place in deploy/docker-compose.yml (deploy/kubernetes: test/kubernetes.test.ts)', () => {
    const compose = parse(readFileSync(join(root, 'deploy', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, unknown> }>;
    };
    const text = readFileSync(join(root, 'deploy', 'docker-compose.yml'), 'utf8');
    const placed = new Set(Object.values(compose.services).flatMap((s) => Object.keys(s.environment ?? {})));
    const missing = documentedSettings().filter(
      (k) => !(k in NOT_DEPLOYED) && !(k === REPLICA_SETTING ? /\$\{REPLICAS_[A-Z]+:-/.test(text) : placed.has(k)),
    );
    expect(missing).toEqual([]);
    // The list the check reads is the docs' own, and the exemptions are settings it names.
    expect(documentedSettings()).toEqual(
      expect.arrayContaining(['X402_RECEIPT_SIGNING_KEY', 'TRUST_PROXY', 'WEBHOOK_POLL_MS']),
    );
    for (const k of Object.keys(NOT_DEPLOYED)) expect(documentedSettings()).toContain(k);
  });
});
