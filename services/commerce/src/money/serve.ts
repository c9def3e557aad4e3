import { commerceSubjects } from '@vcs/contract';
import { dec, enc, StoreUnavailableError, type Services } from '@vcs/platform';
import { refusal, type MoneyReply } from './common.ts';
import { completeHandoff, createHandoff, getHandoff } from './handoffs.ts';
import { createIntent, getIntent, settleIntent } from './intents.ts';
import { mintAnonymousKey } from '../keys.ts';

type Handler = (services: Services, req: any) => Promise<MoneyReply>;
const routes: Record<string, Handler> = {
  [commerceSubjects.intentsCreate]: createIntent,
  [commerceSubjects.intentsSettle]: settleIntent,
  [commerceSubjects.intentsGet]: getIntent,
  [commerceSubjects.handoffsCreate]: createHandoff,
  [commerceSubjects.handoffsGet]: getHandoff,
  [commerceSubjects.handoffsComplete]: completeHandoff,
  [commerceSubjects.keysMint]: mintAnonymousKey,
};

/** Serve the money-and-people subjects: each replies JSON `{status, answer, replayed?}`, never a bare failure. */
export function serveMoney(services: Services) {
  const stops = Object.entries(routes).map(([subject, handle]) =>
    services.bus.serve(subject, 'pillar.commerce', async (msg) => {
      const log = services.log.child({ subject, requestId: msg.headers['x-request-id'] });
      let reply: MoneyReply;
      try {
        reply = await handle(services, msg.data.length ? JSON.parse(dec.decode(msg.data)) : {});
      } catch (err) {
        log.error({ err }, 'money subject failed');
        // 53300: the server has no connection slot left; like an unreachable store, a retry is the fix.
        reply = err instanceof StoreUnavailableError || (err as { code?: string }).code === '53300'
          ? refusal(services, { environment: 'sandbox' }, 'store-unavailable', 'the store is unreachable; retry shortly')
          : refusal(services, { environment: 'sandbox' }, 'internal', `commerce failed on ${subject}; it is logged`);
      }
      return { data: enc.encode(JSON.stringify(reply)), headers: { status: String(reply.status) } };
    }));
  return { stop: () => stops.forEach((s) => s.stop()) };
}
