import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** The setting names in the first column of the tables under a document's `## Settings`. */
export function settingsIn(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const section = text.slice(text.indexOf('\n## Settings')).split(/\n## (?!Settings)/)[0]!;
  return [...section.matchAll(/^\| `([A-Z0-9_<>*]+)`/gm)].map((m) => m[1]!);
}

/**
 * Every setting the operator's documents list: README's table, docs/operations.md's and docs/webhooks.md's (each
 * WEBHOOK_* setting README's `WEBHOOK_*` row points to).
 */
export const documentedSettings = () =>
  [...new Set([...settingsIn('README.md'), ...settingsIn('docs/operations.md'), ...settingsIn('docs/webhooks.md')])]
    .filter((k) => k !== 'WEBHOOK_*')
    .sort();

/**
 * Documented settings a deployment does not set, and why; every other one has its place in deploy/docker-compose.yml
 * and in deploy/kubernetes (test/settings.table.test.ts, test/kubernetes.test.ts).
 */
export const NOT_DEPLOYED: Record<string, string> = {
  PGLITE_DIR: 'the embedded mode only; a deployment runs on Postgres',
  BUILD_CACHE_DIR: 'read by `pnpm build`, not by a running process; the image is built with it empty',
  VPIC_DB_PATH: 'the image holds the vPIC file at the default path (deploy/Dockerfile)',
  NODE_ENV: 'the image sets production (deploy/Dockerfile)',
};

/** Where compose and Kubernetes set replica counts instead: `REPLICAS_<PILLAR>` is compose's and start:distributed's. */
export const REPLICA_SETTING = 'REPLICAS_<PILLAR>';
