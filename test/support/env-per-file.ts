/**
 * Set up before each test file: the suites share their workers' processes and module cache (vitest `isolate: false`,
 * it saves each file loading the same modules again), so each file starts from the worker's environment as it was
 * before any file ran. Reset at the start, not in an afterAll: a file whose tests are all skipped (a distributed
 * suite without its servers) runs no hooks, and what its module wrote to process.env would reach the next file.
 */
const worker = globalThis as { envBeforeAnyFile?: NodeJS.ProcessEnv };
const baseline = (worker.envBeforeAnyFile ??= { ...process.env });
for (const k of Object.keys(process.env)) if (!(k in baseline)) delete process.env[k];
Object.assign(process.env, baseline);
