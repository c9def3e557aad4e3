// Settling an OFFER through the key route (POST /intents/{id}/settle, as the OFFER says): `--accept-price` on a
// capability call, and `vcs settle <intentId>`. Simulated in the sandbox: nothing is paid from a wallet.
import { ops } from '@vcs/contract';
import { settle, type Answer, type Client, type Offer } from '@vcs/sdk';
import { dollarsOf, micros } from './pay.ts';

/** `--accept-price`'s amount in dollars ("5.00", "$5.00" or "5.00 USD"), or undefined when it is not one. */
export function acceptPriceOf(raw: string): string | undefined {
  const m = /^\s*(\S+?)(?:\s+USD)?\s*$/i.exec(raw);
  return m ? dollarsOf(m[1]!) : undefined;
}

/** The key route that settles an intent. */
export const settlePath = (intentId: string) =>
  ops.intentsSettle.route!.path.replace('{intentId}', encodeURIComponent(intentId));

/** An intent id as OFFERs carry it (`value.intent.id`). */
export const isIntentId = (s: string) => /^pi_[A-Za-z0-9_-]{1,100}$/.test(s);

/**
 * Settle the OFFER a call answered when the most it can cost (its ceiling) is within `accept` dollars, through the
 * key route, and return the capability's answer; above it, the OFFER unsettled (and stderr says why).
 */
export async function settleWithin(
  offer: Offer,
  accept: string,
  client: Client,
  headers: Record<string, string>,
  err: (s: string) => void,
): Promise<Answer<unknown>> {
  const { ceiling, intent, settle: route } = offer.value;
  const ceilingDollars = ceiling.currency === 'USD' ? dollarsOf(ceiling.amount) : undefined;
  if (ceilingDollars === undefined || micros(ceilingDollars) > micros(accept)) {
    err(
      `vcs: not settled: ${offer.value.capability} can cost up to ${ceiling.amount} ${ceiling.currency}, ` +
        `more than --accept-price ${accept}; pass --accept-price ${ceiling.amount} to settle intent ${intent.id}`,
    );
    return offer;
  }
  const a = await settle(offer, { client, headers });
  err(`vcs: settled intent ${intent.id} with the key (${route.method} ${route.path}): ${describe(a)}`);
  return a;
}

const describe = (a: Answer<unknown>) =>
  a.type === 'BLOCKED' ? `${a.value.code}: ${a.value.message}` : `${a.type}, charged ${a.meter.charged}`;
