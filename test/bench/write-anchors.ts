import { createHash, randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';

/**
 * The write path's anchors, each the obvious code for one keyed POST that emits one event:
 *   w0          fastify + key check + one transaction inserting an outbox row and a fact row (pg pool of 5)
 *   w1          w0 + the obvious relay (woken on commit, 100 rows a round, JetStream publish with msgID, mark
 *               sent in one statement) + one durable pull consumer (fetch 100, one insert each, ack)
 *   w2-gateway  fastify + key check, the body by NATS request-reply to …
 *   w2-writer   … a writer running w1's transaction, relay and consumer (W1 split in two processes)
 *   e0          w0's route with PGlite (on disk) in the same process instead of a Postgres server
 * Env: ROLE, PORT, DATABASE_URL (w*), NATS_URL + NAMESPACE (w1, w2), PGLITE_DIR (e0), KEY (the one key accepted).
 * The key is stored as a sha256 hash and looked up on a miss, then cached, as any keyed API does.
 */
const ROLE = process.env.ROLE!;
const SCHEMA = [
  'create table if not exists keys(hash text primary key, account text not null)',
  'create table if not exists outbox(seq bigserial primary key, id text not null, subject text not null, payload text not null, sent boolean not null default false)',
  'create index if not exists outbox_unsent on outbox(seq) where not sent',
  'create table if not exists facts(id text primary key, account text not null, body text not null, at timestamptz not null default now())',
  'create table if not exists consumed(id text primary key, at timestamptz not null default now())',
];

interface Sql {
  query(text: string, params?: unknown[]): Promise<{ rows: any[] }>;
  tx<T>(fn: (q: Sql) => Promise<T>): Promise<T>;
}

async function postgres(): Promise<Sql> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
  const sql: Sql = {
    query: (text, params) => pool.query(text, params as unknown[]),
    async tx(fn) {
      const c = await pool.connect();
      try {
        await c.query('begin');
        const r = await fn({
          query: (t, p) => c.query(t, p as unknown[]),
          tx: () => {
            throw new Error('nested');
          },
        });
        await c.query('commit');
        return r;
      } catch (e) {
        await c.query('rollback').catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
    },
  };
  return sql;
}

async function pglite(): Promise<Sql> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(process.env.PGLITE_DIR!);
  const wrap = (q: { query: (t: string, p?: unknown[]) => Promise<{ rows: unknown[] }> }): Sql => ({
    query: (t, p) => q.query(t, p as unknown[]) as Promise<{ rows: any[] }>,
    tx: () => {
      throw new Error('nested');
    },
  });
  return { ...wrap(db), tx: (fn) => db.transaction((t) => fn(wrap(t))) };
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Creates the tables once; W2's two processes both call it, so it holds a lock while it does. */
async function migrate(sql: Sql): Promise<void> {
  await sql.tx(async (q) => {
    if (ROLE !== 'e0') await q.query('select pg_advisory_xact_lock(19019)');
    for (const s of SCHEMA) await q.query(s);
  });
}

async function keyChecker(sql: Sql) {
  await sql.query('insert into keys(hash, account) values ($1, $2) on conflict do nothing', [
    sha(process.env.KEY!),
    'acct_bench',
  ]);
  const cache = new Map<string, string>();
  return async (req: FastifyRequest, reply: FastifyReply): Promise<string | undefined> => {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const hash = key ? sha(key) : '';
    let account = cache.get(hash);
    if (!account && key) {
      account = (await sql.query('select account from keys where hash = $1', [hash])).rows[0]?.account;
      if (account) cache.set(hash, account);
    }
    if (!account) {
      void reply.code(401).send({ code: 'key-required' });
      return undefined;
    }
    return account;
  };
}

/** One durable write: a fact row and an outbox row in one transaction; answers the fact's id. */
async function write(sql: Sql, account: string, body: unknown): Promise<string> {
  const id = randomUUID();
  const event = JSON.stringify({ id: `evt_${id}`, type: 'TotalLoss.acvDetermined@1', account, data: body });
  await sql.tx(async (q) => {
    await q.query('insert into facts(id, account, body) values ($1, $2, $3)', [
      id,
      account,
      JSON.stringify(body ?? {}),
    ]);
    await q.query('insert into outbox(id, subject, payload) values ($1, $2, $3)', [
      `evt_${id}`,
      'evt.totalLoss.acvDetermined',
      event,
    ]);
  });
  return id;
}

/** The relay and the consumer of W1 and W2's writer; `kick` is called after each commit. */
async function eventPipeline(sql: Sql, nc: NatsConnection) {
  const ns = process.env.NAMESPACE!;
  const stream = `ANCHOR_${ns}`;
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${ns}.evt.>`] }).catch(() => undefined);
  const js = jetstream(nc);
  let busy = false,
    again = false;
  const relay = async () => {
    for (;;) {
      const { rows } = await sql.query(
        'select seq, id, subject, payload from outbox where not sent order by seq limit 100',
      );
      if (!rows.length) return;
      await Promise.all(rows.map((r) => js.publish(`${ns}.${r.subject}`, r.payload, { msgID: r.id })));
      await sql.query('update outbox set sent = true where seq = any($1::bigint[])', [rows.map((r) => r.seq)]);
      if (rows.length < 100) return;
    }
  };
  const kick = () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    relay()
      .catch(() => undefined)
      .finally(() => {
        busy = false;
        if (again) {
          again = false;
          kick();
        }
      });
  };
  await jsm.consumers.add(stream, {
    durable_name: 'anchor',
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
  });
  const consumer = await js.consumers.get(stream, 'anchor');
  void (async () => {
    for (;;) {
      const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
      for await (const m of batch) {
        await sql.query('insert into consumed(id) values ($1) on conflict do nothing', [
          m.headers?.get('Nats-Msg-Id') ?? m.seq,
        ]);
        m.ack();
      }
    }
  })().catch(() => undefined);
  return { kick, stop: () => jsm.streams.delete(stream).catch(() => undefined) };
}

const app = Fastify({ logger: false });
let stop = async () => {};
if (ROLE === 'w2-gateway') {
  const sql = await postgres();
  await migrate(sql);
  const nc = await connect({ servers: process.env.NATS_URL, noAsyncTraces: true });
  const account = await keyChecker(sql);
  app.post('/total-loss/acv', async (req, reply) => {
    const acct = await account(req, reply);
    if (!acct) return reply;
    const r = await nc.request(
      `${process.env.NAMESPACE}.anchor.write`,
      JSON.stringify({ account: acct, body: req.body }),
      { timeout: 5000 },
    );
    return reply.type('application/json').send(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength));
  });
  stop = () => nc.drain();
} else if (ROLE === 'w2-writer') {
  const sql = await postgres();
  await migrate(sql);
  const nc = await connect({ servers: process.env.NATS_URL, noAsyncTraces: true });
  const events = await eventPipeline(sql, nc);
  nc.subscribe(`${process.env.NAMESPACE}.anchor.write`, {
    callback: (err, msg) => {
      if (err) return;
      const { account, body } = JSON.parse(new TextDecoder().decode(msg.data));
      write(sql, account, body).then(
        (id) => {
          events.kick();
          msg.respond(JSON.stringify({ type: 'OK', value: { id } }));
        },
        () => msg.respond(JSON.stringify({ type: 'BLOCKED' })),
      );
    },
  });
  stop = async () => {
    await events.stop();
    await nc.drain();
  };
} else {
  const sql = ROLE === 'e0' ? await pglite() : await postgres();
  await migrate(sql);
  const account = await keyChecker(sql);
  const nc = ROLE === 'w1' ? await connect({ servers: process.env.NATS_URL, noAsyncTraces: true }) : undefined;
  const events = nc ? await eventPipeline(sql, nc) : undefined;
  app.post('/total-loss/acv', async (req, reply) => {
    const acct = await account(req, reply);
    if (!acct) return reply;
    const id = await write(sql, acct, req.body);
    events?.kick();
    return { type: 'OK', value: { id } };
  });
  stop = async () => {
    await events?.stop();
    await nc?.drain();
  };
}
// A free read beside the writes, for "reads must not stall behind writes".
app.get('/signings/status', async () => ({ type: 'OK' }));
if (ROLE !== 'w2-writer') await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', () => void stop().finally(() => process.exit(0)));
