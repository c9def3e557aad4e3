import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suites that take a minute or more, started first (in this order) so none of them begins near the end and holds
 * the run open alone: on a fresh clone vitest has no durations yet and would start the larger files first.
 */
const LONG_FIRST = [
  'test/bench.run.smoke.test.ts',
  'test/x402.hostile.test.ts',
  'test/bench.smoke.test.ts',
  'test/typecheck.test.ts',
  'test/nats-cluster.test.ts',
  'test/config.test.ts',
  'test/pages.browser.test.ts',
];
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((name) => f.moduleId.endsWith(name));
      return i < 0 ? LONG_FIRST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * The compose suite runs alone, after every other file: it times recovery (a NATS node killed under load must cost only
 * the writes in flight), and on this 2-core machine a starved container misses those limits for the load beside it,
 * not for anything the stack does. Without a container engine and the distributed settings it skips in a second.
 */
const ALONE = ['test/compose.test.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'suites',
          include: ['libs/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
    // Distributed suites run the built services (dist/), as production does: build them once per run.
    globalSetup: ['test/support/build.ts'],
    // Each file starts from the worker's process.env as it was before any file: files share a worker (isolate: false).
    setupFiles: ['test/support/env-per-file.ts'],
    // The distributed processes refuse the dev-only connection key; tests (and only tests) get a fixed one.
    env: { CONNECTION_ENCRYPTION_KEY: 'dGVzdC1vbmx5LWNvbm5lY3Rpb24ta2V5LTMyYnl0ZXM=' },
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Three files at a time on this 2-core machine: most suites wait on processes, the network and the chain, so two
    // left a third of the CPU idle (suites 460 s, CI 575 s on a fresh clone). Three were too many only while the bus
    // refused a write during a pillar's reconnect (bus/call.ts now waits for a replica) and before isolate: false.
    maxWorkers: 3,
    fileParallelism: true,
    // A worker keeps the modules it loaded for the next file (loading them again was 115 s of the run's CPU).
    isolate: false,
    sequence: { sequencer: LongFirst },
  },
});
