import type { Db } from './db.ts';
import type { Kv } from './kv.ts';

/**
 * The embedded mode's stand-in for Redis keeps its counters in memory; usage (`meter:<account>` hashes) must
 * survive a restart, so those hashes are kept in the embedded database instead (table `kv_counters`, made here:
 * it is the in-process stand-in's own, no pillar's). Every other key stays in memory, as before.
 */
export async function withDurableCounters(kv: Kv, db: Db, prefix = 'meter:'): Promise<Kv> {
  await db.query(
    `create table if not exists kv_counters (
       key text not null, field text not null, n double precision not null default 0, primary key (key, field)
     )`,
  );
  const durable = (key: string) => key.startsWith(prefix);
  const add = async (key: string, field: string, by: number) =>
    Number(
      (
        await db.query<{ n: number }>(
          `insert into kv_counters(key, field, n) values ($1, $2, $3)
           on conflict (key, field) do update set n = kv_counters.n + excluded.n returning n`,
          [key, field, by],
        )
      ).rows[0]!.n,
    );
  return {
    kind: kv.kind,
    redis: kv.redis,
    get: (k) => kv.get(k),
    set: (k, v, ttl) => kv.set(k, v, ttl),
    setNx: (k, v, ttl) => kv.setNx(k, v, ttl),
    del: async (k) => {
      if (durable(k)) await db.query('delete from kv_counters where key = $1', [k]);
      await kv.del(k);
    },
    hincrby: (k, f, by) => (durable(k) ? add(k, f, by) : kv.hincrby(k, f, by)),
    hincrbyfloat: (k, f, by) => (durable(k) ? add(k, f, by) : kv.hincrbyfloat(k, f, by)),
    hgetall: async (k) => {
      if (!durable(k)) return kv.hgetall(k);
      const { rows } = await db.query<{ field: string; n: number }>('select field, n from kv_counters where key = $1', [
        k,
      ]);
      return Object.fromEntries(rows.map((r) => [r.field, String(r.n)]));
    },
    ping: () => kv.ping(),
    close: () => kv.close(),
  };
}
