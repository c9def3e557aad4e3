import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fromCents } from '@vcs/contract';
import { meterKey, type Kv, type Logger } from '@vcs/platform';
import { presentedKey } from './auth.ts';
import type { GatewayDeps } from './deps.ts';
import { addRouteHook, capabilityOf, servesCapability } from './routeCapability.ts';
import type { PaidReply } from './money/pay.ts';

/**
 * Calls answered per capability route (counted here), settlements (counted by commerce with the money, by whatever
 * path paid), and what they collected.
 */
export interface Usage {
  calls: number;
  settlements: number;
  charged: string;
  byCapability: Record<string, { calls: number; settlements: number; charged: string }>;
}

/** What commerce counted of an account's settlements, per capability (`usage.get`). */
export type SettledUsage = { capability: string; settlements: number; chargedCents: number }[];

/**
 * Per-account, per-capability counters (Kv hash `meter:<account>`; Redis in the distributed mode).
 * Calls are counted in memory and flushed in batches, so metering never sits on a call's path.
 */
export class Meter {
  private pending = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout;
  constructor(
    private kv: Kv,
    private log: Logger,
    intervalMs = 200,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  count(account: string, capability: string) {
    const h = this.pending.get(account) ?? new Map<string, number>();
    this.pending.set(account, h);
    const add = (f: string, n: number) => h.set(f, (h.get(f) ?? 0) + n);
    add('calls', 1);
    add(`cap:${capability}:calls`, 1);
  }

  async flush() {
    const batch = this.pending;
    this.pending = new Map();
    for (const [account, fields] of batch) {
      for (const [f, n] of fields) {
        await this.kv
          .hincrby(meterKey(account), f, n)
          .catch((err) =>
            this.log.warn({ reason: (err as Error).message, account }, 'meter flush failed; counts dropped'),
          );
      }
    }
  }

  /**
   * The account's usage: the calls this meter counted (Kv), and the settlements and what they collected as commerce
   * counted them with the money (`usage.get`: its table, written in the statement that settles each one).
   */
  async usage(account: string, settled: SettledUsage): Promise<Usage> {
    await this.flush();
    const h = await this.kv.hgetall(meterKey(account));
    const num = (f: string) => Number(h[f] ?? 0);
    const byCapability: Usage['byCapability'] = {};
    const of = (c: string) => (byCapability[c] ??= { calls: num(`cap:${c}:calls`), settlements: 0, charged: '0.00' });
    for (const f of Object.keys(h)) {
      const m = /^cap:(.+):calls$/.exec(f);
      if (m) of(m[1]!);
    }
    let settlements = 0;
    let cents = 0;
    for (const s of settled) {
      Object.assign(of(s.capability), { settlements: s.settlements, charged: fromCents(s.chargedCents) });
      settlements += s.settlements;
      cents += s.chargedCents;
    }
    return { calls: num('calls'), settlements, charged: fromCents(cents), byCapability };
  }

  stop() {
    clearInterval(this.timer);
    return this.flush();
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A paid call's outcome as the one money path told it (money/pay.ts): whether it counts as a call, and what its
     * log line says of the payment.
     */
    paidCall: Pick<PaidReply, 'countsAsCall' | 'log'> | null;
  }
}

export function registerMeter(app: FastifyInstance, deps: GatewayDeps, meter: Meter) {
  app.decorateRequest('paidCall', null);
  // A callback-style hook, only on capability routes: an anonymous call (no key) costs no promise here.
  addRouteHook(
    app,
    'onResponse',
    (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      done();
      const capability = capabilityOf(req)?.name;
      // Anonymous calls are not metered; rate-limited calls, idempotent replays and 503s (an outcome not known yet:
      // the caller is told to ask again, and that retry is the call) did not run as calls of their own. A paid request
      // (x402) is a call when it bound a new payment, whatever its answer: once per payment, however many 503s and
      // retries it goes through (the money path says which, money/pay.ts).
      const s = reply.statusCode;
      if (!capability || !presentedKey(req) || s === 429) return;
      const paid = req.paidCall;
      if (paid ? !paid.countsAsCall : s === 503 || reply.getHeader('idempotent-replayed')) return;
      if (req.caller.kind === 'key') meter.count(req.caller.account, capability);
    },
    servesCapability,
  );
  app.addHook('onClose', async () => {
    await meter.stop();
  });
}
