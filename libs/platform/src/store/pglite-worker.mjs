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
const { Mutex, PGlite, parse, protocol } = await import('@electric-sql/pglite');

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

/**
 * The one Postgres session PGlite has: a transaction holds it from its BEGIN until it commits or rolls back, and a
 * statement outside a transaction waits for it, so no statement runs inside another caller's transaction.
 */
const session = new Mutex();

/** Open transactions by id: each holds the session until the caller commits or rolls back. */
const open = new Map();
let nextTx = 0;

/**
 * Statements prepared once per SQL text (named, in Postgres's session), then each run sent as one protocol message
 * (Bind, Describe, Execute, Sync): PGlite's own `query` parses and plans the text every time, in six calls into its
 * WebAssembly. Measured on PGlite alone, an update by key costs a third of the CPU this way (docs/decisions.md, "The
 * embedded mode"). The parameters are serialized by the types Postgres inferred, as PGlite's `query` does. Past
 * MAX_PREPARED distinct texts, a new one runs as the unnamed statement. A statement that changes the schema (a
 * migration's script, or a CREATE, ALTER or DROP sent as a query) forgets them all: their plans may no longer fit.
 */
const prepared = new Map();
const MAX_PREPARED = 500;
const changesSchema = /^\s*(create|alter|drop)\b/i;
let lastName = 0;
const { serialize } = protocol;

function joined(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One statement, on the session its caller holds. */
async function statement(sql, params = []) {
  let st = prepared.get(sql);
  if (!st) {
    const name = prepared.size < MAX_PREPARED ? `vcs_${++lastName}` : '';
    const described = await lite.execProtocol(
      joined(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()),
      { syncToFs: false },
    );
    st = {
      name,
      types: parse.parseDescribeStatementResults(described.messages),
      changesSchema: changesSchema.test(sql),
    };
    if (name) prepared.set(sql, st);
  }
  const values = params.map((v, i) => (v == null ? null : (lite.serializers[st.types[i]]?.(v) ?? v.toString())));
  let ran;
  try {
    ran = await lite.execProtocol(
      joined(
        serialize.bind({ statement: st.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ),
      { syncToFs: false },
    );
  } catch (e) {
    // "cached plan must not change result type": its table changed since it was prepared; prepared afresh next time.
    if (e?.code === '0A000') prepared.delete(sql);
    throw e;
  }
  if (st.changesSchema) await forgetPrepared();
  return parse.parseResults(ran.messages, lite.parsers)[0];
}

/** Every prepared statement forgotten, here and in Postgres's session. */
async function forgetPrepared() {
  if (prepared.size === 0) return;
  prepared.clear();
  await lite.execProtocol(serialize.query('deallocate all'), { syncToFs: false });
}

const result = (r) => ({ rows: r.rows, rowCount: r.affectedRows ?? r.rows.length });
const failure = (e) => ({
  message: String(e?.message ?? e),
  code: e?.code,
  detail: e?.detail,
  constraint: e?.constraint,
});

/** Open a transaction: it holds the session until `settle` commits or rolls it back. */
async function begin() {
  const id = ++nextTx;
  const entry = {};
  const release = await session.acquire();
  await new Promise((started, failed) => {
    entry.done = lite
      .transaction(
        (q) =>
          new Promise((end, abort) => {
            Object.assign(entry, { q, end, abort });
            started();
          }),
      )
      .finally(release);
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

/** A statement outside any transaction: it waits for the session, and is durable (synced) before it answers. */
const alone = (fn) =>
  session.runExclusive(async () => {
    const out = await fn();
    await lite.syncToFs();
    return out;
  });

/**
 * A query or a migration's script, on the session its caller holds: `q` is the transaction's, or PGlite itself for a
 * statement alone (statements a transaction sends at once run one after another).
 */
async function run(q, m) {
  if (m.op === 'query') return result(await lite.runExclusive(() => statement(m.sql, m.params)));
  await q.exec(m.sql);
  await lite.runExclusive(forgetPrepared);
  return null;
}

async function handle(m) {
  switch (m.op) {
    case 'query':
    case 'exec': {
      if (m.tx) return run(open.get(m.tx).q, m);
      if (!m.begin) return alone(() => run(lite, m));
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
      if (m.statements.length === 1) await alone(() => statement(m.statements[0].sql, m.statements[0].params));
      else
        await session.runExclusive(() =>
          lite.transaction(async () => {
            for (const st of m.statements) await statement(st.sql, st.params);
          }),
        );
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
