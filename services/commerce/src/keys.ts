import { insertKey, enc, type Services } from '@vcs/platform';

/** Internal subject the gateway calls for POST /keys: mint an anonymous sandbox key and its account. */
export const MINT_SUBJECT = 'sys.commerce.keys.mint';

export function serveKeyMinting(services: Services) {
  return services.bus.serve(MINT_SUBJECT, 'pillar.commerce', async () => {
    const { key, row } = await services.db.tx((q) => insertKey(q, { environment: 'sandbox', now: services.clock.now() }));
    return { data: enc.encode(JSON.stringify({ key, account: row.account_id, keyId: row.id, prefix: row.prefix })) };
  });
}
