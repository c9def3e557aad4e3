import type { Blocked, OpInput, OpReply, PillarAnswer } from '@vcs/contract';
import type { CallContext } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import type { Refused } from '../common.ts';
import type { PaymentPayload } from '../payments.ts';
import type { ExecutionRow, IntentRow, PaymentRow } from '../rows.ts';

/** The request a paid call answers (contract ops.ts `intents.pay`) and the caller's context. */
export type PayRequest = OpInput<'intentsPay'> & { ctx: CallContext };

/**
 * Who is driving a paid call and until when: the paying request (its id, its deadline), or the reconciler, which
 * answers nobody (no request id).
 */
export interface Run {
  services: Services;
  requestId?: string;
  /** Epoch ms: past it, the steps stop waiting and answer why there is no answer yet. */
  deadline: number;
  /** Epoch ms: until then a request whose outcome is being decided is held, not answered 503 (`held`). */
  holdUntil?: number;
  /** The caller, for whom a new offer is made when its payment's intent can no longer be paid (`delivered`). */
  ctx?: CallContext;
}

/** A payment as presented: the payload, its authorization's one key, its payment-identifier, and where it came. */
export interface Presented {
  p: PaymentPayload;
  /** The authorization's one key: network, asset, payer, nonce (addresses and nonces compare without case). */
  key: [network: string, asset: string, payer: string, nonce: string];
  identifier: string | null;
  req: PayRequest;
}

/**
 * A payment on its way to its answer: its intent and payment as last read or moved. `answer` is the capability's
 * answer as this request's execution recorded it (a secret it holds is shown this once); `fresh`, this request moved
 * the intent to its final state (its answer is not a replay); `pending`, why there is no answer yet (a 503 that says
 * when to ask again).
 */
export interface Paying {
  intent: IntentRow;
  payment: PaymentRow;
  /** This request bound the payment (the one call a paid call counts as). */
  bound: boolean;
  /** The execution this request made and holds the claim on (bound), run by `executed`. */
  claimed?: ExecutionRow;
  /** The intent's execution, when known (the event of its end names it). */
  executionId?: string;
  answer?: PillarAnswer;
  /** This request's execution just answered with what its price pays for: its payment is sent now, once. */
  sendNow?: boolean;
  fresh?: boolean;
  pending?: OpReply<Blocked, never>;
}

/**
 * A new payment's step lost to a copy of the same payment (its binding failed on the payment's unique key, or the
 * facilitator refused what the copy already spent): the entry looks again, and answers as a retry if a copy is bound,
 * else with `refused`.
 */
export class Raced extends Error {
  constructor(readonly refused: Refused) {
    super(refused.message);
    this.name = 'Raced';
  }
}
