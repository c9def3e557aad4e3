import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  realpathSync,
  mkdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../config.ts';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Logger } from 'pino';
import { outageLog } from './outage.ts';
import { lockDataDir } from './dirLock.ts';
import { createPgliteThreadDb } from './pglite-thread.ts';
import { groupCommitter, runGroupAtomically, type Statement } from './groupCommit.ts';

export { mergeWrites, statementsOf, type BulkWrite, type Statement } from './groupCommit.ts';
export {
  REQUIRED_WRITE_MISSED,
  shifted,
  together,
  wrote,
  writeTogether,
  type Part,
  type Required,
  type RowOfPart,
  type Sql,
} from './together.ts';

export interface Queryable {
  query<T = any>(sql: string, params?: unknown[]): Promise<{ rows: T[]; rowCount: number }>;
  /** Run a script of several statements (migrations). */
  exec?(sql: string): Promise<void>;
}
/** The store boundary: Postgres through pg (distributed) or PGlite (embedded), same SQL. */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Run `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Run `statements` atomically when their text and parameters are known up front (an answer's events and fact).
   * Concurrent batches share one transaction and one commit (group commit); each caller is answered after it.
   */
  batch(statements: Statement[]): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * The one test of "a store is down, retry" (Postgres, PGlite or Redis): our wrapper's error (by name too: it crosses
 * PGlite's worker thread), a raw Postgres connection error, or ioredis's refusals while it reconnects.
 */
export const isStoreUnavailable = (e: unknown): boolean =>
  e instanceof StoreUnavailableError ||
  (e as Error | undefined)?.name === 'StoreUnavailableError' ||
  isConnError(e) ||
  /Connection is closed|Stream isn't writeable|enableOfflineQueue|MaxRetriesPerRequest/i.test(
    String((e as Error | undefined)?.message),
  );

/** How long a query waits for a free connection of its process's pool before it is answered 503 store-unavailable. */
const POOL_WAIT_MS = 2000;
/** pg-pool's error when no connection of the pool came free within POOL_WAIT_MS. */
const POOL_WAIT_OVER = /timeout exceeded when trying to connect/i;

/**
 * What a caller is told of a store that did not answer (`store-unavailable`, 503): a pool with no connection free
 * within its wait (every one busy: the store is slow or the process has more work than connections) is not a store
 * that cannot be reached, and the operator looking at it needs to know which.
 */
export function storeUnavailableMessage(e: unknown, what = 'the store'): string {
  return POOL_WAIT_OVER.test(String((e as Error | undefined)?.message))
    ? `every connection to ${what} stayed busy for ${POOL_WAIT_MS / 1000} s; retry shortly`
    : `${what} is unreachable; retry shortly`;
}

/** Postgres's unique_violation (23505), on `constraint` when one is named: a row with that key is there already. */
export const isUniqueViolation = (e: unknown, constraint?: string): boolean =>
  (e as { code?: string } | undefined)?.code === '23505' &&
  (constraint === undefined || (e as { constraint?: string }).constraint === constraint);

const isConnError = (e: any) =>
  e &&
  (e.code === 'ECONNREFUSED' ||
    e.code === '53300' ||
    e.code === '57P01' ||
    e.code === '57P02' ||
    e.code === '57P03' ||
    e.code === 'ECONNRESET' ||
    /Connection terminated|connect ECONNREFUSED/i.test(String(e.message)) ||
    POOL_WAIT_OVER.test(String(e.message)));

/** `name`: the service, as its connections' application_name (`vcs-commerce`: pg_stat_activity, the server's logs). */
export function createPgDb(url: string, max = 5, log?: Pick<Logger, 'info' | 'warn'>, name?: string): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: POOL_WAIT_MS,
    idleTimeoutMillis: 10_000,
    ...(name && { application_name: `vcs-${name}` }),
  });
  pool.on('error', () => undefined); // a dropped idle client must not crash the process; the next query reconnects
  const outage = outageLog(log, 'Postgres');
  const unavailable = (e: unknown) => {
    const err = new StoreUnavailableError(String((e as Error).message));
    outage.down(err.message);
    return err;
  };
  const wrap = async <T>(p: Promise<T>) => {
    try {
      const r = await p;
      outage.up();
      return r;
    } catch (e) {
      if (isConnError(e)) throw unavailable(e);
      throw e;
    }
  };
  const db: Db = {
    kind: 'postgres',
    query: <T>(sql: string, params?: unknown[]) =>
      wrap(
        pool
          .query<T & pg.QueryResultRow, unknown[]>(sql, params)
          .then((r) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })),
      ),
    async tx(fn) {
      const client = await wrap(pool.connect());
      // The pool listens for errors on idle clients only: a server shutting down mid-transaction emits 'error' on
      // this checked-out one, and unheard that would crash the process. The query in flight rejects anyway.
      let broken: Error | undefined;
      const onError = (e: Error) => {
        broken = e;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: <T>(sql: string, params?: unknown[]) =>
            client
              .query<T & pg.QueryResultRow, unknown[]>(sql, params)
              .then((r) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })),
        });
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (isConnError(e)) throw unavailable(e);
        throw e;
      } finally {
        client.off('error', onError);
        client.release(broken); // a broken client is destroyed, not returned to the pool
      }
    },
    async ping() {
      try {
        await pool.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
    close: () => pool.end(),
    batch: (statements) => commit(statements),
  };
  // Group commits take at most two of the pool's connections: reads and interactive transactions keep the rest.
  // One statement is atomic on its own: no BEGIN and COMMIT round trips for it.
  const atomically = async (statements: { sql: string; params?: unknown[] }[]) => {
    if (statements.length === 1) {
      await db.query(statements[0]!.sql, statements[0]!.params);
      return;
    }
    await db.tx(async (q) => {
      for (const st of statements) await q.query(st.sql, st.params);
    });
  };
  const commit = groupCommitter((group) => runGroupAtomically(atomically, group), {
    concurrency: Math.max(1, Math.min(2, max - 1)),
    maxGroup: 64,
  });
  return db;
}

/**
 * The embedded store: PGlite on disk (or `memory://`), in a worker thread so its statements never block HTTP.
 * `seed`: a data directory made beforehand (deploy/build.ts: initdb and the migrations), copied into a `dir` that
 * holds no database yet, so a first start opens a database instead of making one (initdb: ~4 s and ~700 MB).
 */
export async function createPgliteDb(dir: string, seed?: string): Promise<Db> {
  if (dir === 'memory://') return createPgliteThreadDb(dir);
  usableDir(dir, 'PGLITE_DIR');
  // One process per directory (dirLock.ts), taken before anything in it is read or written.
  const lock = lockDataDir(realpathSync(dir), 'PGLITE_DIR');
  try {
    if (seed) seedPgliteDir(dir, seed);
    const db = await createPgliteThreadDb(dir);
    return {
      ...db,
      async close() {
        await db.close();
        lock.release();
      },
    };
  } catch (e) {
    lock.release();
    throw e;
  }
}

/**
 * Copy the seed into an empty `dir`: beside it first, then renamed into place, so a start stopped half-way leaves no
 * half a database. Without a seed (never built), or a `dir` that is not empty, nothing happens: PGlite opens what is
 * there, or makes a database as before.
 */
export function seedPgliteDir(dir: string, seed: string): boolean {
  if (!existsSync(join(seed, 'PG_VERSION')) || readdirSync(dir).length > 0) return false;
  const tmp = `${resolve(dir)}.seeding-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(seed, tmp, { recursive: true });
  rmdirSync(dir);
  renameSync(tmp, dir);
  return true;
}

/**
 * Make a directory a setting names (each missing level in turn) and check it can be written, or throw one line
 * naming the setting (exit 78). Not `mkdirSync(dir, { recursive: true })`: under /proc it spins for ever (Node's
 * recursive mkdir retries a parent that exists yet refuses children: ~79k mkdir calls in 3 s, no output).
 */
export function usableDir(dir: string, setting: string) {
  const abs = resolve(dir);
  const missing: string[] = [];
  for (let d = abs; !existsSync(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  try {
    for (const d of missing) mkdirSync(d);
    if (!statSync(abs).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(abs, constants.R_OK | constants.W_OK);
  } catch (e) {
    throw new ConfigError(
      `config error: ${setting}: cannot use ${abs} as a directory ` +
        `(${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); ` +
        'point it at a writable directory, or memory:// to keep nothing',
    );
  }
}

/** A schema's owner and the folder of its `NNN_name.sql` files: the platform's own tables, and each pillar's. */
export interface Migrations {
  owner: string;
  dir: string;
}
export const platformMigrations: Migrations = {
  owner: 'platform',
  dir: join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations'),
};

/**
 * Apply each owner's migrations in order, once each, recorded as `<owner>/<file>`; replicas racing at start take
 * turns on an advisory lock. A file whose first line says `-- replaces: <file>` took over a migration of the
 * single folder we had before each pillar owned its tables: on a database where that one ran, it is only recorded.
 */
export async function migrate(db: Db, sets: Migrations[]): Promise<string[]> {
  const applied: string[] = [];
  await db.tx(async (q) => {
    await q.query('select pg_advisory_xact_lock(724001)');
    await q.query(
      'create table if not exists schema_migrations ' +
        '(version text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set(
      (await q.query<{ version: string }>('select version from schema_migrations')).rows.map((r) => r.version),
    );
    for (const { owner, dir } of sets) {
      for (const f of readdirSync(dir)
        .filter((x) => /^\d{3}_.+\.sql$/.test(x))
        .sort()) {
        const version = `${owner}/${f}`;
        if (done.has(version)) continue;
        const script = readFileSync(join(dir, f), 'utf8');
        const replaces = /^-- replaces: (\S+)/.exec(script)?.[1];
        if (!replaces || !done.has(replaces)) {
          if (q.exec) await q.exec(script);
          else await q.query(script);
          applied.push(version);
        }
        await q.query('insert into schema_migrations(version) values ($1)', [version]);
        done.add(version);
      }
    }
  });
  return applied;
}
