import { insertKey, type Services } from '@vcs/platform';
import type { MoneyReply } from './money/common.ts';

/** `keys.mint` (contract ops.ts), behind POST /keys: mint an anonymous sandbox key and its account. */
export async function mintAnonymousKey(services: Services): Promise<MoneyReply> {
  const now = services.clock.now();
  const { key, row } = await services.db.tx(async (q) => {
    const minted = await insertKey(q, { environment: 'sandbox', now });
    await q.query(
      'insert into api_key_events(key_id, account_id, type, data, occurred_at) values ($1,$2,$3,$4,$5)',
      [minted.row.id, minted.row.account_id, 'ApiKey.minted@1', JSON.stringify({ prefix: minted.row.prefix, via: 'POST /keys' }), now],
    );
    return minted;
  });
  return { status: 200, answer: { type: 'OK', key, account: row.account_id, keyId: row.id, prefix: row.prefix } };
}
