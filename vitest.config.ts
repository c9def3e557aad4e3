import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['libs/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // Distributed suites run the built services (dist/), as production does: build them once per run.
    globalSetup: ['test/support/build.ts'],
    // The distributed processes refuse the dev-only connection key; tests (and only tests) get a fixed one.
    env: { CONNECTION_ENCRYPTION_KEY: 'dGVzdC1vbmx5LWNvbm5lY3Rpb24ta2V5LTMyYnl0ZXM=' },
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Distributed suites spawn OS processes; two files at a time on a 2-core machine. Three were faster (397 s) but
    // left the compose stack's NATS node-loss run short of CPU: 9 writes refused against its bound of 6, once in five.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
