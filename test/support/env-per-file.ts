/**
 * Set up before each test file: the suites share their workers' module cache (vitest `isolate: false`, it saves each
 * file loading the same modules again), so what a file writes to process.env is undone when the file ends.
 */
import { afterAll } from 'vitest';

const before = { ...process.env };
afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in before)) delete process.env[k];
  Object.assign(process.env, before);
});
