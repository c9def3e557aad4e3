import { blocked, capabilityByName, newId, nouns as catalogNouns, type EventEnvelope } from '@vcs/contract';
import { recordAnswer, type OpsImpl, type Queryable, type Services } from '@vcs/platform';
import type { ServicesPillarServices } from '../config.ts';
import { connectionKey, encryptCredential } from './crypto.ts';

// Score weights: documented in docs/events.md (activation queue).
const WEIGHTS = { demand: 1, sameSystem: 2, recency: 1 };
const DEMAND_WINDOW_DAYS = 30;

/** Ranked entries with each factor of their score (highest first). */
export async function rankedQueue(q: Queryable, now: Date) {
  const since = new Date(now.getTime() - DEMAND_WINDOW_DAYS * 86_400_000).toISOString();
  const { rows } = await q.query<any>(
    `select c.id, c.account_id, c.kind, c.system, c.nouns, c.status, c.submitted_at,
        (select count(distinct d.account_id)::int from noun_demand d
          where d.noun = any(c.nouns) and d.last_seen >= $1) as demand,
        (select count(*)::int - 1 from connections o where o.system = c.system) as same_system
       from connections c where c.status = 'queued'`,
    [since],
  );
  const entries = rows.map((r) => {
    const ageDays = (now.getTime() - new Date(r.submitted_at).getTime()) / 86_400_000;
    const recency = Math.round((1 / (1 + Math.max(0, ageDays))) * 1000) / 1000;
    const factors = { demand: r.demand, sameSystem: r.same_system, recency };
    const score =
      Math.round(
        (WEIGHTS.demand * factors.demand + WEIGHTS.sameSystem * factors.sameSystem + WEIGHTS.recency * recency) * 1000,
      ) / 1000;
    return {
      id: r.id as string,
      account: r.account_id as string,
      kind: r.kind,
      system: r.system,
      nouns: r.nouns as string[],
      submittedAt: new Date(r.submitted_at).toISOString(),
      score,
      factors,
    };
  });
  entries.sort((a, b) => b.score - a.score || a.submittedAt.localeCompare(b.submittedAt) || a.id.localeCompare(b.id));
  return entries.map((e, i) => ({ place: i + 1, ...e }));
}

/** `connections.submit` and `connections.queue` (contract ops.ts): going live, and the ranked queue. */
export function connectionOps(services: ServicesPillarServices): OpsImpl<'services'> {
  const key = connectionKey(services.settings, { embedded: services.mode === 'embedded' });
  return {
    async connectionsSubmit(s, ctx) {
      if (!ctx.account)
        return {
          status: 401,
          answer: { ...blocked('key-required', 'submitting a connection needs a key: mint one with POST /keys') },
        };
      const id = newId('connection');
      const sealed = encryptCredential(key, s.credential);
      const nounsOf = s.nouns ?? catalogNouns.map((n) => n.noun);
      await services.db.query(
        `insert into connections(
           id, account_id, kind, system, nouns, credential_ciphertext, credential_iv, credential_tag, submitted_at
         )
         values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
        [
          id,
          ctx.account,
          s.kind,
          s.system,
          nounsOf,
          sealed.ciphertext,
          sealed.iv,
          sealed.tag,
          services.clock.now().toISOString(),
        ],
      );
      const queue = await rankedQueue(services.db, services.clock.now());
      const mine = queue.find((e) => e.id === id);
      const connection = {
        id,
        kind: s.kind,
        system: s.system,
        nouns: nounsOf,
        status: 'queued',
        place: mine?.place ?? null,
        of: queue.length,
      };
      return { status: 200, answer: recordAnswer(services, ctx, 'Connection@1', connection) };
    },
    async connectionsQueue(_input, ctx) {
      const queue = await rankedQueue(services.db, services.clock.now());
      // Other accounts' entries show their rank and score, not whose they are.
      const entries = queue.map(({ account: owner, ...e }) => ({ ...e, mine: owner === ctx.account }));
      return {
        status: 200,
        answer: recordAnswer(services, ctx, 'ActivationQueue@1', {
          entries,
          mine: entries.filter((e) => e.mine).map((e) => ({ id: e.id, place: e.place })),
        }),
      };
    },
  };
}

/**
 * Demand: distinct accounts calling each noun, from the event stream (state in Postgres, so restarts keep it).
 * One upsert a batch; a (noun, account) pair appears once in it, at its latest time.
 */
export async function recordDemand(services: Services, events: EventEnvelope[]) {
  const latest = new Map<string, { noun: string; account: string; at: string }>();
  for (const evt of events) {
    const noun = evt.capability ? capabilityByName(evt.capability)?.noun : undefined;
    if (!evt.account || !noun) continue;
    const k = `${noun} ${evt.account}`;
    const seen = latest.get(k);
    if (!seen || Date.parse(evt.occurredAt) > Date.parse(seen.at))
      latest.set(k, { noun, account: evt.account, at: evt.occurredAt });
  }
  if (!latest.size) return;
  const rows = [...latest.values()];
  await services.db.query(
    `insert into noun_demand(noun, account_id, last_seen)
     select * from unnest($1::text[], $2::text[], $3::timestamptz[])
     on conflict (noun, account_id) do update set last_seen = greatest(noun_demand.last_seen, excluded.last_seen)`,
    [rows.map((r) => r.noun), rows.map((r) => r.account), rows.map((r) => r.at)],
  );
}
