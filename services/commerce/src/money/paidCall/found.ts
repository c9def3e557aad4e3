import { canonicalJson, capabilityByName } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { jsonValue, type IntentRow } from '../rows.ts';
import { refuse } from '../common.ts';
import { settlePath } from '../intents.ts';
import { payingOf, type PaymentWithIntent } from './looked.ts';
import type { Paying, PayRequest, Presented } from './paying.ts';

/**
 * 2. The authorization seen before (or its payment-identifier): a retry reaches the intent it pays, whoever sends it
 * and on whichever route — but only for that intent, and only for what it was offered for. The one place a retry is
 * recognised (the paid call's entry asks it first, and again when a copy of the payment won a race).
 */
export function found(services: Services, pr: Presented, own: PaymentWithIntent[]): Paying | null {
  const { ctx, intentId, route } = pr.req;
  const [, , payer, nonce] = pr.key;
  if (!own.length) return null;
  const same = own.find(
    (r) =>
      r.payment.payer.toLowerCase() === payer.toLowerCase() && r.payment.nonce.toLowerCase() === nonce.toLowerCase(),
  );
  if (!same) {
    const first = own[0]!.payment;
    refuse(
      services,
      ctx,
      'payment-identifier-conflict',
      `payment id ${pr.identifier} was first sent with another payment (${first.id}, for intent ` +
        `${first.intent_id}); nothing was charged: send that payment again to read its answer, or use a new id`,
      { intent: { id: first.intent_id }, next: { method: 'POST', path: settlePath(first.intent_id) } },
    );
  }
  const paid = same.payment.intent_id;
  if (intentId && !route && intentId !== paid)
    refuse(
      services,
      ctx,
      'payment-other-intent',
      `this payment authorization already pays for intent ${paid}; one authorization pays for one ` +
        `intent only: read its answer by sending it to POST ${settlePath(paid)}`,
      { intent: { id: paid }, next: { method: 'POST', path: settlePath(paid) } },
    );
  if (route) wrongResource(services, ctx, same.intent, route);
  return payingOf(same);
}

/** Honoured only for what was offered: the intent's capability, and its input (parsed as the capability parses it). */
export function wrongResource(
  services: Services,
  ctx: CallContext,
  r: IntentRow,
  route: NonNullable<PayRequest['route']>,
): void {
  const c = capabilityByName(route.capability);
  const input = c?.request.safeParse(route.input);
  const same =
    route.capability === r.capability &&
    input?.success &&
    canonicalJson(input.data) === canonicalJson(jsonValue(r.input));
  if (same) return;
  const offeredAt = capabilityByName(r.capability);
  // Next: its intent's settle route, where this payment pays what it was signed for with no body to restate.
  const next = { method: 'POST' as const, path: settlePath(r.id) };
  refuse(
    services,
    ctx,
    'payment-wrong-resource',
    route.capability === r.capability
      ? `this payment was made for ${r.capability} with another input (intent ${r.id}); nothing was charged: ` +
          `send it to POST ${next.path}, or with that intent's input, or sign the offer this request is answered with`
      : `this payment was made for ${r.capability} (intent ${r.id}), not ${route.capability}; nothing was charged ` +
          `here: send it to POST ${next.path} (or on ${offeredAt?.method ?? 'POST'} ${offeredAt?.path ?? next.path} ` +
          `with that intent's input), or pay this route's own offer`,
    { intent: { id: r.id, capability: r.capability }, next },
  );
}
