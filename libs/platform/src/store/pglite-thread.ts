import { Worker } from 'node:worker_threads';
import type { Db, Queryable } from './db.ts';
import { groupCommitter, runGroupAtomically } from './groupCommit.ts';

interface Failure {
  message: string;
  code?: string;
  detail?: string;
  constraint?: string;
}
type Reply = { id: number; value?: unknown; error?: Failure } | { ready: true } | { fatal: Failure };

/**
 * The embedded store: PGlite in a worker thread (pglite-worker.mjs), behind the same Db interface as Postgres.
 * PGlite runs every statement synchronously; on the HTTP thread each one stalled every request in the process
 * (free reads waited behind writes). Here the HTTP thread only posts a message and awaits the answer.
 */
export async function createPgliteThreadDb(dir: string): Promise<Db> {
  const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), { workerData: { dir } });
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 0;
  let closed = false;
  await new Promise<void>((ready, failed) => {
    worker.once('error', failed);
    worker.on('message', (m: Reply) => {
      if ('ready' in m) {
        worker.off('error', failed);
        ready();
        return;
      }
      if (!('id' in m)) return;
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.error) w.reject(Object.assign(new Error(m.error.message), m.error));
      else w.resolve(m.value);
    });
  });
  // A worker that dies fails what waits on it; the process's readiness then reports the store down.
  worker.on('error', (e) => {
    closed = true;
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  });
  worker.on('exit', () => {
    closed = true;
  });

  const call = <T>(msg: Record<string, unknown>): Promise<T> => {
    if (closed) return Promise.reject(new Error('the embedded store is closed'));
    const id = ++next;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...msg, id });
    });
  };
  /** Statements sent through `send`: straight to the worker, or as part of a transaction. */
  const sentBy = (send: <T>(msg: Record<string, unknown>) => Promise<T>): Queryable => ({
    query: (sql, params) => send({ op: 'query', sql, params }),
    exec: (sql) => send({ op: 'exec', sql }),
  });
  // A group is one message: the worker runs its statements in one transaction without waiting on this thread.
  const atomically = (statements: { sql: string; params?: unknown[] }[]) => call<void>({ op: 'script', statements });
  const commit = groupCommitter((group) => runGroupAtomically(atomically, group), { concurrency: 1, maxGroup: 128 });
  return {
    kind: 'pglite',
    batch: commit,
    ...sentBy(call),
    async tx(fn) {
      // BEGIN travels with the transaction's first statement, and a transaction that sent none commits nothing: one
      // message (a wake-up of each thread) fewer per transaction. The worker rolls back a first statement that fails.
      let opened: Promise<number> | undefined;
      const statement = <T>(msg: Record<string, unknown>): Promise<T> => {
        if (opened) return opened.then((tx) => call<T>({ ...msg, tx }));
        const first = call<{ tx: number; value: T }>({ ...msg, begin: true });
        opened = first.then((r) => r.tx);
        opened.catch(() => undefined); // the first statement's caller gets its error
        return first.then((r) => r.value);
      };
      let out;
      try {
        out = await fn(sentBy(statement));
      } catch (e) {
        const tx = await opened?.catch(() => undefined);
        if (tx) await call({ op: 'rollback', tx }).catch(() => undefined);
        throw e;
      }
      if (opened) await call({ op: 'commit', tx: await opened });
      return out;
    },
    async ping() {
      return !closed;
    },
    async close() {
      if (closed) return;
      await call({ op: 'close' }).catch(() => undefined);
      closed = true;
      await worker.terminate();
    },
  };
}
