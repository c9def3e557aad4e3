import { execFileSync } from 'node:child_process';
import { root } from '../../deploy/current.mjs';

/**
 * Vitest global setup: `pnpm build`, so no suite runs a stale build (dist/ is made again when a source changed) and
 * the two prepared files it makes (the embedded database seed and the slim vPIC file) exist before any suite starts
 * a process: otherwise processes that start at once each make their own, one replacing what another is reading.
 * In a Node process of its own: the data pillar finds its vPIC package with import.meta.resolve, which Vite's module
 * runner (where a global setup runs) does not offer.
 */
export default function setup() {
  execFileSync(process.execPath, ['--import', 'tsx', 'deploy/build.ts'], { cwd: root, stdio: 'inherit' });
}
