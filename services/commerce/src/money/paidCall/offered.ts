import { canonicalJson, claimWith, edgeOf, type OpReplyOf } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { refuse, Refused } from '../common.ts';
import { findIntent, insertIntent, newOfferFor, newOfferReply } from '../intents.ts';
import { checkPayment, intentTermsOf, paymentPending, paymentRefusal, railOf, type IntentTerms } from '../payments.ts';
import { jsonValue, storedAnswerOrNull, type IntentRow } from '../rows.ts';
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
 * and only while it is open (one that can no longer be paid: `payableInstead`); then its terms checked against the
 * offer, before anything is sent anywhere. An intent already settled another way answers its stored answer, charging
 * nothing.
 */
export async function offered(
  services: Services,
  pr: Presented,
  named: IntentRow | undefined,
): Promise<Offer | { settled: IntentRow } | { reoffered: OpReplyOf<'intentsPay'> }> {
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
    const made = await insertIntent(services, ctx, route!.capability, route!.input);
    if ('reply' in made) throw new Refused(made.reply);
    r = made.row;
  }
  if (route) wrongResource(services, ctx, r, route);
  const now = services.clock.now();
  // The intent it came for, or — that one no longer payable — the one it pays instead (`payableInstead`), once.
  for (let again = false; ; again = true) {
    ownIntent(services, ctx, r);
    const current = r;
    // The one claim routine: final, its stored answer if it was paid (nothing charged) or else no longer payable;
    // in flight, being settled — say when to ask again; open, this payment takes it (checked below, bound in step 6).
    const decided = claimWith<'intent', { settled: IntentRow } | 'ended' | 'open'>('intent', current, now.getTime(), {
      replay: () => (current.status === edgeOf('intent', 'collect').to ? { settled: current } : 'ended'),
      wait: () => {
        throw new Refused(
          paymentPending(
            intentTermsOf(current),
            'payment-pending',
            `intent ${current.id} is being settled; read the outcome with GET /intents/${current.id}`,
            2,
          ),
          { intentId: current.id },
        );
      },
      take: () => (new Date(current.expires_at) > now ? 'open' : 'ended'),
    });
    if (decided === 'open') break;
    if (decided !== 'ended') return decided;
    const other = await payableInstead(services, pr, current, again);
    if ('reoffered' in other) return other;
    r = other.intent;
  }
  const t = intentTermsOf(r);
  const bad = checkPayment(railOf(services), t, pr.p, now.getTime());
  if (bad)
    throw new Refused(paymentRefusal(services, ctx, t, bad), { intentId: t.id, refusal: refusalOf(t, bad.x402Error) });
  return { intent: r, terms: t };
}

/** A payment for an intent is honoured only for the account that made it, or for any payer of one made without a key. */
function ownIntent(services: Services, ctx: CallContext, r: IntentRow): void {
  if (r.account_id && r.account_id !== ctx.account)
    refuse(
      services,
      ctx,
      'intent-other-account',
      `intent ${r.id} belongs to another account; pay it with the key of the account that made it, ` +
        'or without a key for an offer made without one',
      { intent: { id: r.id } },
    );
}

/**
 * The intent a payment pays when the one it came for can no longer be paid (expired, or failed: declined, its
 * payment refused or expired unused, its answer a failure). On that intent's settle route: the new offer for the same
 * call that the payment was signed for (a v2 payment names it), or for a v1 payment, which names none, a new offer
 * made now for it — as a v1 payment on a capability's route makes its own. Otherwise the answer is a new offer for
 * the same capability and input (402 OFFER: its PAYMENT-REQUIRED is what to sign), nothing charged.
 */
async function payableInstead(
  services: Services,
  pr: Presented,
  dead: IntentRow,
  again: boolean,
): Promise<{ intent: IntentRow } | { reoffered: OpReplyOf<'intentsPay'> }> {
  const { ctx, route } = pr.req;
  if (!again && !route) {
    if (pr.p.x402Version === 1) return { intent: await newOfferFor(services, ctx, dead) };
    const named = pr.p.accepted.extra?.intentId;
    const other = typeof named === 'string' && named !== dead.id ? await findIntent(services.db, named) : undefined;
    if (
      other &&
      other.capability === dead.capability &&
      canonicalJson(jsonValue(other.input)) === canonicalJson(jsonValue(dead.input))
    )
      return { intent: other };
  }
  const ended = storedAnswerOrNull(dead.answer);
  const why =
    dead.status === edgeOf('intent', 'decline').to && ended
      ? `intent ${dead.id} ended failed (${ended.type === 'BLOCKED' ? ended.value.code : ended.type})`
      : `intent ${dead.id} expired at ${new Date(dead.expires_at).toISOString()}`;
  const fresh = await newOfferFor(services, ctx, dead);
  return { reoffered: { ...newOfferReply(services, ctx, fresh, why), meta: { intentId: fresh.id, bound: false } } };
}
