// PGlite in its own thread (plain JavaScript: a worker is started from a file, and tsx's loader does not follow
// workers on Node 20). PGlite runs each statement synchronously in WebAssembly; here that blocks this thread
// only, so the HTTP thread keeps answering while writes run. Protocol: see pglite-thread.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// PGlite's 9 MB of WebAssembly compiled once, by Liftoff (V8's baseline compiler), and never again by TurboFan: the
// optimised copies of the functions Postgres runs hot cost ~45–50 MB of this process's memory, and an embedded store's
// statements ran no slower without them here (docs/decisions.md, "The embedded mode"). Set before PGlite's module
// is compiled (so the import below is dynamic); process-wide, so sql.js (vPIC) is compiled the same way.
setFlagsFromString('--liftoff-only');
const { PGlite } = await import('@electric-sql/pglite');

/**
 * Postgres's memory sized for an embedded store of a few hundred megabytes of rows, not a server's defaults: PGlite's
 * postgresql.conf asks for 128 MB of shared buffers, which Postgres touches at start (130 MB of the process's RSS).
 * 16 MB holds this service's hot rows (measured: docs/decisions.md, "The embedded mode"); WAL buffers follow
 * shared_buffers (1/32: 512 kB). Given on the command line after PGlite's own start parameters, so no file in the data
 * directory changes and an older directory starts the same way.
 */
export const EMBEDDED_SETTINGS = [
  'shared_buffers=16MB',
  'temp_buffers=2MB',
  'work_mem=2MB',
  'maintenance_work_mem=16MB',
  'max_connections=8',
];
const startParams = [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((s) => ['-c', s])];

/**
 * A `memory://` database starts from a copy of a freshly initialised one (PGlite's dumpDataDir, kept under the
 * system's temporary directory per PGlite build) instead of running initdb each time: initdb takes 3-6 s of CPU on
 * this 2-core machine, loading the copy under 1 s, and every embedded start (each test harness) paid it. The copy is
 * exactly what initdb made, written once and renamed into place; one that cannot be loaded is removed and made again.
 */
async function memoryDatabase() {
  const pglite = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const build = createHash('sha256').update(`${pglite} ${statSync(pglite).size} ${statSync(pglite).mtimeMs}`);
  const file = join(tmpdir(), `vcs-pglite-initdb-${build.digest('hex').slice(0, 16)}.tar`);
  try {
    return await PGlite.create({ loadDataDir: new Blob([readFileSync(file)]), startParams });
  } catch {
    rmSync(file, { force: true });
  }
  const lite = await PGlite.create({ startParams });
  try {
    const part = `${file}.${process.pid}.${Date.now()}`;
    writeFileSync(part, Buffer.from(await (await lite.dumpDataDir('none')).arrayBuffer()));
    renameSync(part, file);
  } catch {
    /* no copy kept: the next start runs initdb too */
  }
  return lite;
}

const lite =
  workerData.dir === 'memory://' ? await memoryDatabase() : await PGlite.create(workerData.dir, { startParams });
// initdb (a fresh directory without a seed, or memory://) leaves ~350 MB of WebAssembly memory that only a full
// collection gives back, and V8, seeing a small JavaScript heap, runs none for a long while. On the next turn: until
// then PGlite still holds initdb's memory.
setFlagsFromString('--expose-gc');
setTimeout(() => runInNewContext('gc')(), 0);

/** Open transactions by id: each holds PGlite's lock until the caller commits or rolls back. */
const open = new Map();
let nextTx = 0;

const result = (r) => ({ rows: r.rows, rowCount: r.affectedRows ?? r.rows.length });
const failure = (e) => ({
  message: String(e?.message ?? e),
  code: e?.code,
  detail: e?.detail,
  constraint: e?.constraint,
});

/** Open a transaction: PGlite's lock is held until `settle` commits or rolls it back. */
async function begin() {
  const id = ++nextTx;
  const entry = {};
  await new Promise((started, failed) => {
    entry.done = lite.transaction(
      (q) =>
        new Promise((end, abort) => {
          Object.assign(entry, { q, end, abort });
          started();
        }),
    );
    entry.done.catch(failed);
  });
  open.set(id, entry);
  return id;
}

async function settle(id, commit) {
  const t = open.get(id);
  open.delete(id);
  if (commit) {
    t.end();
    await t.done;
  } else {
    t.abort(new Error('rollback'));
    await t.done.catch(() => undefined);
  }
}

const run = (q, m) => (m.op === 'exec' ? q.exec(m.sql).then(() => null) : q.query(m.sql, m.params).then(result));

async function handle(m) {
  switch (m.op) {
    case 'query':
    case 'exec': {
      if (!m.begin) return run(m.tx ? open.get(m.tx).q : lite, m);
      // A transaction's first statement brings its BEGIN (one message fewer per transaction). If it fails, the
      // transaction is rolled back here: the caller has no transaction to roll back.
      const tx = await begin();
      try {
        return { tx, value: await run(open.get(tx).q, m) };
      } catch (e) {
        await settle(tx, false);
        throw e;
      }
    }
    case 'script': // several callers' statements, one transaction, one commit (group commit: groupCommit.ts)
      if (m.statements.length === 1)
        await lite.query(m.statements[0].sql, m.statements[0].params); // atomic alone
      else
        await lite.transaction(async (q) => {
          for (const st of m.statements) await q.query(st.sql, st.params);
        });
      return null;
    case 'commit':
    case 'rollback':
      await settle(m.tx, m.op === 'commit');
      return null;
    case 'close':
      await lite.close();
      return null;
    default:
      throw new Error(`unknown op ${m.op}`);
  }
}

parentPort.on('message', (m) => {
  handle(m).then(
    (value) => parentPort.postMessage({ id: m.id, value }),
    (e) => parentPort.postMessage({ id: m.id, error: failure(e) }),
  );
});
parentPort.postMessage({ ready: true });
