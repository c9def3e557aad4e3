import { problemsOf } from '@vcs/contract';
import {
  isPaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
  validatePaymentIdentifier,
} from '@x402/extensions/payment-identifier';
import type { CallContext } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { refuse } from '../common.ts';
import { settlePath } from '../intents.ts';
import { paymentHeader, railOf, type PaymentPayload } from '../payments.ts';
import type { PayRequest, Presented } from './paying.ts';

/** 1. The header is an x402 exact-scheme EVM payment, v2 or v1, and this deployment takes payments. */
export function parsed(services: Services, req: PayRequest): Presented {
  const { ctx } = req;
  const rail = railOf(services);
  const named = req.intentId ?? '(none)';
  if (!rail.terms.live)
    refuse(
      services,
      ctx,
      'payments-not-accepted',
      'this deployment takes no x402 payments (no X402_FACILITATOR_URL is set); ' +
        `settle intent ${named} with POST ${settlePath(named)} and a key`,
      { next: { method: 'POST', path: settlePath(named) } },
    );
  const header = paymentHeader.safeParse(req.payment);
  if (!header.success)
    refuse(
      services,
      ctx,
      'payment-invalid',
      'the payment is not an x402 exact-scheme EVM payment (v2 PAYMENT-SIGNATURE or v1 X-PAYMENT: ' +
        'base64 JSON with payload.signature and payload.authorization); fix each problem listed',
      { problems: problemsOf(header.error.issues, 'header'), x402Error: 'invalid_payload' },
    );
  const p = header.data;
  const a = p.payload.authorization;
  return {
    p,
    key: [rail.terms.network, rail.terms.asset, a.from, a.nonce],
    identifier: identifierOf(services, ctx, p),
    req,
  };
}

/** x402's payment-identifier (a v2 payload's extensions): the client's own id for this payment, checked by the extension. */
function identifierOf(services: Services, ctx: CallContext, p: PaymentPayload): string | null {
  const ext = p.x402Version === 2 ? p.extensions?.[PAYMENT_IDENTIFIER] : undefined;
  if (!ext) return null;
  const validation = validatePaymentIdentifier(ext);
  if (!validation.valid || !isPaymentIdentifierExtension(ext))
    refuse(
      services,
      ctx,
      'payment-invalid',
      `the payment-identifier extension is not valid (${validation.errors?.join('; ')}); ` +
        'an id is 16-128 letters, digits, - and _',
      { x402Error: 'invalid_payload' },
    );
  // The offer's declaration echoed back without an id names no payment.
  return ext.info.id ?? null;
}
