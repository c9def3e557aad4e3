import { claimWith, edgeOf } from '@vcs/contract';
import type { CommerceServices as Services } from '../../config.ts';
import { refuse, Refused } from '../common.ts';
import { insertIntent, refuseExpired } from '../intents.ts';
import { checkPayment, intentTermsOf, paymentPending, paymentRefusal, railOf, type IntentTerms } from '../payments.ts';
import type { IntentRow } from '../rows.ts';
import { wrongResource } from './found.ts';
import type { Presented } from './paying.ts';

/** What a new payment pays: its intent, open for payment, and the offer's terms it was checked against. */
export interface Offer {
  intent: IntentRow;
  terms: IntentTerms;
}

/** A refused payment's x402 reason, with the capability whose offer to sign again. */
export const refusalOf = (t: IntentTerms, x402Error: string) => ({ x402Error, capability: t.capability });

/**
 * 4. The intent a new payment pays — the one it names (the settle route's, or a v2 payment's accepted.extra.intentId),
 * or for a v1 payment on a route (v1 names none) one made now for that route — honoured only for what was offered
 * and only while it is open; then its terms checked against the offer, before anything is sent anywhere. An intent
 * already settled another way answers its stored answer, charging nothing.
 */
export async function offered(
  services: Services,
  pr: Presented,
  named: IntentRow | undefined,
): Promise<Offer | { settled: IntentRow }> {
  const { ctx, route, intentId } = pr.req;
  let r: IntentRow;
  if (intentId) {
    if (!named)
      refuse(
        services,
        ctx,
        'intent-not-found',
        `no intent ${intentId}; intent ids start pi_ and come from a 402 OFFER`,
      );
    r = named;
  } else {
    const made = await insertIntent(services, services.db, ctx, route!.capability, route!.input);
    if ('reply' in made) throw new Refused(made.reply);
    r = made.row;
  }
  if (route) wrongResource(services, ctx, r, route);
  if (r.account_id && r.account_id !== ctx.account)
    refuse(
      services,
      ctx,
      'intent-other-account',
      `intent ${r.id} belongs to another account; pay it with the key of the account that made it, ` +
        'or without a key for an offer made without one',
      { intent: { id: r.id } },
    );
  const t = intentTermsOf(r);
  const now = services.clock.now();
  // The one claim routine: final, its stored answer (nothing charged); in flight, being settled — say when to ask
  // again; open, this payment takes it (checked below, bound in step 6).
  const settled = claimWith('intent', r, now.getTime(), {
    replay: () => {
      if (r.status === edgeOf('intent', 'expire').to) refuseExpired(services, ctx, r);
      return r;
    },
    wait: () => {
      throw new Refused(
        paymentPending(
          t,
          'payment-pending',
          `intent ${t.id} is being settled; read the outcome with GET /intents/${t.id}`,
          2,
        ),
        { intentId: t.id },
      );
    },
    take: () => null,
  });
  if (settled) return { settled };
  if (new Date(r.expires_at) <= now) refuseExpired(services, ctx, r);
  const bad = checkPayment(railOf(services), t, pr.p, now.getTime());
  if (bad)
    throw new Refused(paymentRefusal(services, ctx, t, bad), { intentId: t.id, refusal: refusalOf(t, bad.x402Error) });
  return { intent: r, terms: t };
}
