import { systemClock, type Clock } from '../clock.ts';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { outageLog } from './outage.ts';

/** The few Redis operations the service uses, behind one interface: ioredis (distributed) or memory (embedded). */
export interface Kv {
  readonly kind: 'redis' | 'memory';
  /** The ioredis client, for libraries that take one (rate-limiter-flexible); null in memory. */
  readonly redis: Redis | null;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Set only if absent; true when this call set it. */
  setNx(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<void>;
  hincrby(key: string, field: string, by: number): Promise<number>;
  hincrbyfloat(key: string, field: string, by: number): Promise<number>;
  hgetall(key: string): Promise<Record<string, string>>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export function createRedisKv(url: string, prefix = '', log?: Pick<Logger, 'info' | 'warn'>): Kv {
  const redis = new Redis(url, {
    keyPrefix: prefix,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
    connectTimeout: 2000,
  });
  // It reconnects by itself and callers see the failed command; the outage itself is said once, and its end.
  const outage = outageLog(log, 'Redis');
  let wasReady = false;
  let closing = false;
  redis.on('error', (e: Error) => {
    if (wasReady && !closing) outage.down(e.message);
  });
  redis.on('close', () => {
    if (wasReady && !closing) outage.down('connection closed');
  });
  redis.on('ready', () => {
    wasReady = true;
    outage.up();
  });
  return {
    kind: 'redis',
    redis,
    get: (k) => redis.get(k),
    async set(k, v, ttl) {
      await redis.set(k, v, 'PX', ttl);
    },
    async setNx(k, v, ttl) {
      return (await redis.set(k, v, 'PX', ttl, 'NX')) === 'OK';
    },
    async del(k) {
      await redis.del(k);
    },
    hincrby: (k, f, by) => redis.hincrby(k, f, by),
    async hincrbyfloat(k, f, by) {
      return Number(await redis.hincrbyfloat(k, f, by));
    },
    hgetall: (k) => redis.hgetall(k),
    async ping() {
      try {
        return (await redis.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    async close() {
      closing = true;
      redis.disconnect();
    },
  };
}

/** The embedded stand-in for Redis; its expiries run on the process's clock, as everything else here does. */
export function createMemoryKv(clock: Clock = systemClock): Kv {
  const vals = new Map<string, { v: string; exp: number }>();
  const hashes = new Map<string, Map<string, number>>();
  const live = (k: string) => {
    const e = vals.get(k);
    if (e && e.exp < clock.now().getTime()) {
      vals.delete(k);
      return undefined;
    }
    return e;
  };
  return {
    kind: 'memory',
    redis: null,
    async get(k) {
      return live(k)?.v ?? null;
    },
    async set(k, v, ttl) {
      vals.set(k, { v, exp: clock.now().getTime() + ttl });
    },
    async setNx(k, v, ttl) {
      if (live(k)) return false;
      vals.set(k, { v, exp: clock.now().getTime() + ttl });
      return true;
    },
    async del(k) {
      vals.delete(k);
    },
    async hincrby(k, f, by) {
      const h = hashes.get(k) ?? new Map();
      hashes.set(k, h);
      const n = (h.get(f) ?? 0) + by;
      h.set(f, n);
      return n;
    },
    async hincrbyfloat(k, f, by) {
      const h = hashes.get(k) ?? new Map();
      hashes.set(k, h);
      const n = (h.get(f) ?? 0) + by;
      h.set(f, n);
      return n;
    },
    async hgetall(k) {
      return Object.fromEntries([...(hashes.get(k) ?? new Map())].map(([f, n]) => [f, String(n)]));
    },
    async ping() {
      return true;
    },
    async close() {},
  };
}
