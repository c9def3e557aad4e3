/**
 * A bench script run as `pnpm bench*` runs it, in smoke mode (BENCH_SMOKE=1: every server, path and row, a few
 * requests each) on the dist/ the global set-up built (BENCH_SKIP_BUILD=1): test/bench*.smoke.test.ts.
 */
import { join } from 'node:path';
import { runProcess } from './run-process.ts';

const root = join(import.meta.dirname, '..', '..');
const TSX = join(root, 'node_modules', '.bin', 'tsx');

export const runScript = (script: string, env: Record<string, string>) =>
  runProcess(TSX, [script], { cwd: root, env: { ...process.env, BENCH_SMOKE: '1', BENCH_SKIP_BUILD: '1', ...env } });
