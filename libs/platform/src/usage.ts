import type { Kv } from './store/kv.ts';

/**
 * Usage per account (Kv hash `meter:<account>`; Redis in the distributed mode): the gateway counts the calls each
 * capability route answers, commerce counts each settlement once, when its execution's answer is recorded
 * (whichever path paid or authorised it), with what it collected. `GET /keys/me` reads them together.
 */
export const meterKey = (account: string) => `meter:${account}`;

/** Count one settlement of `capability` and the cents it collected (0 for a simulated settlement). */
export async function countSettlement(
  kv: Kv,
  account: string,
  capability: string,
  chargedCents: number,
): Promise<void> {
  const key = meterKey(account);
  await Promise.all([
    kv.hincrby(key, 'settlements', 1),
    kv.hincrby(key, `cap:${capability}:settlements`, 1),
    ...(chargedCents
      ? [
          kv.hincrby(key, 'charged_cents', chargedCents),
          kv.hincrby(key, `cap:${capability}:charged_cents`, chargedCents),
        ]
      : []),
  ]);
}

/**
 * Count one call of `capability` (the gateway batches its own; commerce counts a paid call once, when its payment
 * is first bound, so a paid call retried through its 503s is one call).
 */
export async function countCall(kv: Kv, account: string, capability: string): Promise<void> {
  const key = meterKey(account);
  await Promise.all([kv.hincrby(key, 'calls', 1), kv.hincrby(key, `cap:${capability}:calls`, 1)]);
}
