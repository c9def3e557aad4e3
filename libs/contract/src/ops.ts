import { z } from 'zod';
import { answerSchema, blocked, money, paymentReceipt, timestamp, type Blocked } from './answer.ts';
import { statusOfCode, type BlockedCode } from './codes.ts';
import type { Pillar } from './capability.ts';
import { connectionSubmission } from './connections.ts';
import { lifecycles } from './lifecycles.ts';
import { mandate } from './mandate.ts';
import { secret } from './secret.ts';
import { buyDealRequest, dealValue } from './nouns/deal.ts';

/**
 * A platform operation: a bus message that is not a catalog capability (money rails, deals, connections, keys).
 * Like a capability it is declared once here, and its serving pillar, the gateway's route, the OpenAPI entry and
 * the callers all take it from this declaration.
 * On the wire: request `{ input, ctx }` on `subject` (queue group `pillar.<pillar>`); reply framed as a capability's
 * (`<status> <kind> <served-by>[ replayed]\n<answer JSON>`, platform/src/bus/call.ts).
 */
export interface Op<
  I extends z.ZodType = z.ZodType,
  P extends Pillar = Pillar,
  R extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>,
  M extends z.ZodType | undefined = z.ZodType | undefined,
> {
  /** `<noun>.<verb>`, also the OpenAPI operationId. */
  readonly name: string;
  readonly subject: string;
  readonly pillar: P;
  readonly input: I;
  /**
   * What it answers when it does not refuse (the 200, or the 402 OFFER / 403 NEEDS_HUMAN that is its point); a
   * refusal is a BLOCKED answer with one of `codes`. The caller's reply is typed from it (`OpAnswer`), its server
   * checks each answer against it outside production (platform bus/serve.ts), and its OpenAPI 200 is made from it.
   */
  readonly reply: R;
  /**
   * What travels beside the answer, typed, for the caller's own use and never sent on to a client as it is (a paid
   * call's intent, receipt and refusal terms): the second JSON line of the reply's frame (platform bus/call.ts).
   */
  readonly meta?: M;
  /** Safe to send twice (a read): the caller retries it once when a replica died or did not answer. */
  readonly idempotent: boolean;
  /** The BLOCKED codes it may answer besides the transport's (`transportCodes`). */
  readonly codes: readonly BlockedCode[];
  /** It runs capabilities and may pass on their answers' BLOCKED codes too (a settlement, a deal step). */
  readonly passesCapabilityCodes?: true;
  /**
   * Its time-out in multiples of BUS_TIMEOUT_MS (default 1), for one that runs capabilities inside it: the one
   * time-out rule is `opTimeouts` below.
   */
  readonly timeouts?: number;
  /** The HTTP face, when it has one: path parameters are input members of the same name. */
  readonly route?: {
    method: 'GET' | 'POST';
    path: string;
    summary: string;
    key: 'required' | 'optional' | 'none';
    answers: string;
  };
}

/**
 * What a platform operation answers: the HTTP status, the answer, whether it is a stored answer replayed, and its
 * typed members beside the answer (`Op.meta`). `A` is the answer's type: a server's is its op's declared reply or a
 * refusal (`OpReplyOf`), checked by the compiler.
 */
export interface OpReply<A = Record<string, unknown>, M = unknown> {
  status: number;
  answer: A;
  replayed?: boolean;
  meta?: M;
}

/** A refusal as an operation's reply: the BLOCKED answer with the status its code calls for. */
export const blockedReply = (...args: Parameters<typeof blocked>): OpReply<Blocked, never> => ({
  status: statusOfCode(args[0]),
  answer: blocked(...args),
});

/** The codes any operation may answer whatever it declares: its input refused at its server, or the transport's. */
export const transportCodes = [
  'invalid-input',
  'pillar-unavailable',
  'store-unavailable',
  'internal',
] as const satisfies readonly BlockedCode[];

const envelope = answerSchema(z.record(z.string(), z.unknown())).options;
/** Answer envelopes by type: `ok(value)` for an OK record, and the BLOCKED and OFFER envelopes. */
const ok = <V extends z.ZodType>(value: V) => answerSchema(value).options[0];
export const blockedAnswer = envelope[2];
export const offerAnswer = envelope[3];
export type BlockedAnswer = z.output<typeof blockedAnswer>;

/**
 * The one time-out rule of a platform operation of n time-outs (`Op.timeouts`): its pillar gets `timeoutMs` =
 * n × BUS_TIMEOUT_MS (sent as the input's `timeoutMs` where it has one) and gives the capabilities it runs 500 ms
 * less (at least a second), so its own time-out answer arrives first; a caller of more than one time-out waits 500 ms
 * more.
 */
export function opTimeouts(o: Pick<Op, 'timeouts'>, busTimeoutMs: number, sent?: number) {
  const n = o.timeouts ?? 1;
  const timeoutMs = sent ?? n * busTimeoutMs;
  return { timeoutMs, waitMs: timeoutMs + (n > 1 ? 500 : 0), innerMs: Math.max(1000, timeoutMs - 500) };
}

const op = <
  I extends z.ZodType,
  const P extends Pillar,
  R extends z.ZodType<Record<string, unknown>>,
  M extends z.ZodType | undefined = undefined,
>(
  o: Op<I, P, R, M>,
): Op<I, P, R, M> => o;
const id = (prefix: string, what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .meta({ description: `The ${what} id (${prefix}…)` });
/**
 * An input member the gateway sets (a header's value, the time-out it waits), never taken from the caller's body:
 * the route drops it from the body and the OpenAPI document leaves it out.
 */
const setByGateway = <T extends z.ZodType>(s: T): T => s.meta({ setByGateway: true });
export const setByGatewayMembers = (o: Op): string[] =>
  Object.entries((o.input as unknown as z.ZodObject).shape ?? {})
    .filter(([, v]) => (v as z.ZodType).meta()?.setByGateway)
    .map(([k]) => k);
/** How long the pillar may take before it answers a time-out itself (the gateway waits a little longer). */
const timeoutMs = setByGateway(z.number().int().min(100).max(120_000).optional());
/** Where an intent or handoff came from: the deal and the step position that opened it. */
const origin = z.object({ dealId: z.string(), step: z.number().int().min(1) }).optional();
const link = (method: 'GET' | 'POST') => z.object({ method: z.literal(method), path: z.string() });
const anyRecord = z.record(z.string(), z.unknown());

/** A key row as commerce sends it to the gateway (`keys.lookup`): the hash in hex, times as ISO text. */
export const keyRowWire = z.object({
  id: z.string(),
  account_id: z.string(),
  prefix: z.string(),
  secret_hash: z.string().regex(/^[0-9a-f]*$/),
  scopes: z.array(z.string()),
  mandate_binding: z.string(),
  trust_tier: z.string(),
  status: z.enum(['active', 'superseded', 'revoked']),
  superseded_by: z.string().nullable(),
  grace_until: timestamp.nullable(),
  created_at: timestamp,
  last_rotated_at: timestamp.nullable(),
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
});
/** The BLOCKED codes of an x402 payment refused for good, or whose outcome is not known yet. */
export const paymentCodes = [
  'payment-invalid',
  'payment-invalid-signature',
  'payment-wrong-amount',
  'payment-wrong-recipient',
  'payment-wrong-asset',
  'payment-wrong-network',
  'payment-wrong-scheme',
  'payment-expired',
  'payment-already-used',
  'payment-other-intent',
  'payment-wrong-resource',
  'payment-identifier-conflict',
  'payment-insufficient-funds',
  'payments-not-accepted',
  'payment-unavailable',
  'payment-pending',
] as const satisfies readonly BlockedCode[];
/**
 * What a paid call's reply carries beside its answer (`intents.pay`): for the gateway, which sends the receipt
 * (PAYMENT-RESPONSE), a refused payment's fresh offer (PAYMENT-REQUIRED) and the intent's id (Intent-Id), and counts
 * the call; never sent to a client as it is.
 */
export const paidCallMembers = z.object({
  intentId: z.string().optional().meta({ description: 'The intent the payment pays or was presented for (pi_…)' }),
  bound: z.boolean().meta({ description: 'This request bound a new payment to its intent: the one call it counts as' }),
  receipt: paymentReceipt.optional().meta({ description: 'The payment that moved money for this answer' }),
  paymentStatus: z
    .enum(lifecycles.payment.states)
    .optional()
    .meta({ description: 'The state of the payment this answer is for, once held (none: refused before it was held)' }),
  refusal: z
    .object({ x402Error: z.string(), capability: z.string() })
    .optional()
    .meta({ description: "A payment refused for good: x402's reason, and the capability whose offer to sign again" }),
});
export type PaidCallMembers = z.output<typeof paidCallMembers>;
/** The Intent@1 value (GET /intents/{id}). */
const intentValue = z.object({
  id: z.string(),
  status: z.enum(['pending', 'settled', 'expired', 'failed']),
  capability: z.string(),
  account: z.string().nullable(),
  price: money,
  ceiling: money,
  expiresAt: timestamp,
  createdAt: timestamp,
  settledAt: timestamp.nullable(),
  origin: z.object({ dealId: z.string(), step: z.number().int() }).nullable(),
  executions: z
    .number()
    .int()
    .meta({ description: 'How many times the capability ran for this intent: 0 or 1, never more' }),
  settle: link('POST'),
  answer: anyRecord.nullable(),
  charged: money.meta({
    description: "What settling it collected: 0.00 for a simulated settlement, the payment's amount for an x402 one",
  }),
  payment: paymentReceipt
    .extend({
      status: z.enum(lifecycles.payment.states),
      reason: z.string().nullable(),
    })
    .nullable()
    .meta({
      description:
        'The x402 payment bound to this intent, when one was sent: its network, payer, amount, transaction and status',
    }),
});
export type IntentValue = z.output<typeof intentValue>;
/** The Handoff@1 value (GET /handoffs/{id}, and its completion). */
const handoffValue = z.object({
  id: z.string(),
  status: z.enum(['pending', 'completed', 'refused']),
  verb: z.string(),
  credential: z.string(),
  capability: z.string().nullable(),
  terminus: anyRecord,
  account: z.string().nullable(),
  origin: z.object({ dealId: z.string(), step: z.number().int() }).nullable(),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
  poll: link('GET'),
  complete: link('POST').extend({ body: anyRecord }),
  result: anyRecord.nullable(),
});
export type HandoffValue = z.output<typeof handoffValue>;
/** A NEEDS_HUMAN refusal: the desk to reach and the handoff to poll. */
const needsHuman = blockedAnswer.extend({
  value: z.looseObject({
    code: z.literal('NEEDS_HUMAN'),
    message: z.string(),
    verb: z.string(),
    credential: z.string(),
    capability: z.string().nullable(),
    terminus: anyRecord,
    handoff: z.object({ id: z.string(), status: z.string(), poll: link('GET') }),
  }),
});
/** What a settled capability answered: its OK or EMPTY envelope. */
const capabilityAnswer = z.union([envelope[0], envelope[1]]);
const connectionValue = z.object({
  id: z.string(),
  kind: z.string(),
  system: z.string(),
  nouns: z.array(z.string()),
  status: z.string(),
  place: z.number().int().nullable(),
  of: z.number().int(),
});
const queueEntry = z.looseObject({
  place: z.number().int(),
  id: z.string(),
  kind: z.string(),
  system: z.string(),
  nouns: z.array(z.string()),
  submittedAt: timestamp,
  score: z.number(),
  mine: z.boolean(),
});

export const ops = {
  keysMint: op({
    name: 'keys.mint',
    subject: 'sys.commerce.keys.mint',
    pillar: 'commerce',
    input: z.object({}),
    idempotent: false,
    codes: [],
    // The gateway adds links to it (POST /keys); its secret is in this one answer only.
    reply: z.object({
      type: z.literal('OK'),
      key: secret(z.string(), 'The new key: shown in this answer only'),
      account: z.string(),
      keyId: z.string(),
      prefix: z.string(),
    }),
    route: {
      method: 'POST',
      path: '/keys',
      summary: 'Mint an anonymous sandbox key and its account (no body).',
      key: 'none',
      answers: 'ApiKeyMinted@1',
    },
  }),
  keysLookup: op({
    // The gateway checks keys through commerce, which owns their table; it caches the row for a few seconds.
    name: 'keys.lookup',
    subject: 'sys.commerce.keys.lookup',
    pillar: 'commerce',
    idempotent: true,
    codes: [],
    input: z.object({ prefix: z.string().min(1).max(100) }),
    reply: z.union([
      z.object({ type: z.literal('OK'), answers: z.literal('ApiKeyRow@1'), value: keyRowWire }),
      z.object({ type: z.literal('EMPTY'), value: z.object({}) }),
    ]),
  }),
  usageGet: op({
    // GET /keys/me's settlements and what they collected: counted by commerce in the statement that settles each one.
    name: 'usage.get',
    subject: 'sys.commerce.usage.get',
    pillar: 'commerce',
    idempotent: true,
    codes: [],
    input: z.object({ account: z.string().min(1).max(200) }),
    reply: z.object({
      type: z.literal('OK'),
      answers: z.literal('SettlementUsage@1'),
      value: z.object({
        byCapability: z.array(
          z.object({
            capability: z.string(),
            settlements: z.number().int().min(0),
            chargedCents: z.number().int().min(0).meta({ description: 'What they collected, in cents' }),
          }),
        ),
      }),
    }),
  }),
  intentsCreate: op({
    name: 'intents.create',
    subject: 'sys.commerce.intents.create',
    pillar: 'commerce',
    idempotent: false,
    codes: ['invalid-input'],
    input: z.object({ capability: z.string(), input: z.record(z.string(), z.unknown()), origin }),
    reply: offerAnswer,
  }),
  intentsGet: op({
    name: 'intents.get',
    subject: 'sys.commerce.intents.get',
    pillar: 'commerce',
    idempotent: true,
    codes: ['intent-not-found', 'intent-other-account'],
    input: z.object({ intentId: id('pi_', 'intent') }),
    reply: ok(intentValue),
    route: {
      method: 'GET',
      path: '/intents/{intentId}',
      summary: "An intent's state: pending, settled (with its answer), expired or failed.",
      key: 'optional',
      answers: 'Intent@1',
    },
  }),
  intentsSettle: op({
    name: 'intents.settle',
    subject: 'sys.commerce.intents.settle',
    pillar: 'commerce',
    idempotent: false,
    codes: [
      'intent-not-found',
      'intent-other-account',
      'intent-expired',
      'offer-declined',
      'idempotency-in-flight',
      'forbidden',
      'invalid-mandate',
      'mandate-ceiling-exceeded',
      'mandate-per-action-exceeded',
      'mandate-expired',
      'tripwire',
      'payment-failed',
      'execution-failed',
      'key-required',
      'execution-pending',
      // Its route refuses a Sandbox-Trigger the intent's capability does not honour (the gateway, before any payment).
      'trigger-not-honoured',
      ...paymentCodes,
    ],
    passesCapabilityCodes: true,
    timeouts: 2,
    input: z.object({
      intentId: id('pi_', 'intent'),
      mandate: setByGateway(mandate.optional()),
      timeoutMs,
    }),
    reply: capabilityAnswer,
    route: {
      method: 'POST',
      path: '/intents/{intentId}/settle',
      summary:
        'Settle the intent of a 402 OFFER with a key (simulated in the sandbox) ' +
        'or an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT); the capability then executes, once.',
      key: 'optional',
      answers: "the capability's answer",
    },
  }),
  intentsPay: op({
    // A paid call (PAYMENT-SIGNATURE or X-PAYMENT), on a capability's route (the offer gate) or on its intent's settle
    // route: the payment reaches the intent it already pays, or the one it names, or — a v1 payment's first
    // presentation on a route — one made now for that route; it is honoured only for the resource it was offered for
    // (capability and input). Verified, the capability runs once, and only an answer worth its price is settled.
    name: 'intents.pay',
    subject: 'sys.commerce.intents.pay',
    pillar: 'commerce',
    idempotent: false,
    codes: [
      'invalid-input',
      'intent-not-found',
      'intent-other-account',
      'intent-expired',
      'idempotency-in-flight',
      'payment-failed',
      'execution-failed',
      'execution-pending',
      ...paymentCodes,
    ],
    passesCapabilityCodes: true,
    // Verify, the capability (a settlement's time at most) and the settle: three round trips it waits on.
    timeouts: 3,
    input: z.object({
      /** The capability route the payment was presented on, with its input (absent on the settle route). */
      route: z.object({ capability: z.string(), input: z.record(z.string(), z.unknown()) }).optional(),
      /** The intent the settle route names, or a v2 payment's accepted.extra.intentId; absent for v1 on a route. */
      intentId: id('pi_', 'intent').optional(),
      timeoutMs,
      /**
       * How long commerce may hold the request while its outcome is being decided (its capability running, its
       * settlement in doubt) before it answers 503: the gateway's X402_PAYMENT_HOLD_MS left (timeoutMs covers it).
       */
      holdMs: setByGateway(z.number().int().min(0).max(120_000).optional()),
      /** The decoded x402 payment (PAYMENT-SIGNATURE v2 or X-PAYMENT v1); commerce parses it. */
      payment: setByGateway(z.record(z.string(), z.unknown())),
    }),
    // Or, for a payment whose intent can no longer be paid (expired, failed), a new offer for the same call.
    reply: z.union([envelope[0], envelope[1], offerAnswer]),
    meta: paidCallMembers,
  }),
  intentsReread: op({
    // x402 sign-in-with-x: the wallet that paid for a resource (capability and input) reads its stored answer
    // again, no key and no payment; the gateway has verified the wallet's proof before it asks.
    name: 'intents.reread',
    subject: 'sys.commerce.intents.reread',
    pillar: 'commerce',
    idempotent: true,
    codes: ['intent-not-found'],
    passesCapabilityCodes: true,
    input: z.object({
      capability: z.string(),
      input: z.record(z.string(), z.unknown()),
      payer: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    }),
    reply: capabilityAnswer,
  }),
  executionsRun: op({
    // A deal step runs its capability as a durable execution of commerce's: created once per (source, sourceId),
    // so sending it again (a retry, a step taken up after a lease) returns the same execution's answer.
    name: 'executions.run',
    subject: 'sys.commerce.executions.run',
    pillar: 'commerce',
    idempotent: true,
    codes: ['execution-pending', 'idempotency-in-flight'],
    passesCapabilityCodes: true,
    timeouts: 2,
    input: z.object({
      source: z.literal('deal'),
      sourceId: z.string().min(1).max(200),
      capability: z.string(),
      input: z.record(z.string(), z.unknown()).nullable(),
      origin,
      timeoutMs,
    }),
    reply: capabilityAnswer,
  }),
  handoffsCreate: op({
    name: 'handoffs.create',
    subject: 'sys.commerce.handoffs.create',
    pillar: 'commerce',
    idempotent: false,
    codes: ['NEEDS_HUMAN', 'invalid-input'],
    // A sandbox trigger has the desk complete it at once, running its capability.
    timeouts: 2,
    input: z.object({
      verb: z.enum(['authorize', 'notarize', 'sign', 'pay']),
      credential: z.string(),
      capability: z.string().nullable(),
      input: z.record(z.string(), z.unknown()).nullable(),
      origin,
    }),
    reply: needsHuman,
  }),
  handoffsGet: op({
    name: 'handoffs.get',
    subject: 'sys.commerce.handoffs.get',
    pillar: 'commerce',
    idempotent: true,
    codes: ['handoff-not-found', 'forbidden'],
    input: z.object({ handoffId: id('ho_', 'handoff') }),
    reply: ok(handoffValue),
    route: {
      method: 'GET',
      path: '/handoffs/{handoffId}',
      summary: 'Poll a NEEDS_HUMAN handoff.',
      key: 'required',
      answers: 'Handoff@1',
    },
  }),
  handoffsComplete: op({
    name: 'handoffs.complete',
    subject: 'sys.commerce.handoffs.complete',
    pillar: 'commerce',
    idempotent: false,
    codes: [
      'handoff-not-found',
      'forbidden',
      'invalid-input',
      'idempotency-in-flight',
      'human-refused',
      'execution-pending',
    ],
    timeouts: 2,
    reply: ok(handoffValue),
    input: z.object({
      handoffId: id('ho_', 'handoff'),
      outcome: z.enum(['completed', 'refused']).meta({ description: 'What the human did' }),
      credential: z.string().min(1).meta({ description: 'The credential the handoff names, for example "notary"' }),
      timeoutMs,
    }),
    route: {
      method: 'POST',
      path: '/handoffs/{handoffId}/complete',
      summary: 'The credentialed human completes or refuses a handoff.',
      key: 'required',
      answers: 'Handoff@1',
    },
  }),
  dealsForVin: op({
    // The VIN record shows the deals on a car; workflows owns them.
    name: 'deals.forVin',
    subject: 'sys.workflows.deals.forVin',
    pillar: 'workflows',
    idempotent: true,
    codes: [],
    input: z.object({ vin: z.string().min(1).max(17) }),
    reply: z.object({
      type: z.literal('OK'),
      answers: z.literal('DealsOfVin@1'),
      value: z.object({
        deals: z.array(
          z.object({
            id: z.string(),
            workflow: z.string(),
            state: z.string(),
            checklist: z.unknown(),
            createdAt: timestamp,
            updatedAt: timestamp,
          }),
        ),
      }),
    }),
  }),
  dealsOpen: op({
    name: 'deals.create',
    subject: 'sys.workflows.deals.open',
    pillar: 'workflows',
    idempotent: false,
    codes: ['invalid-input', 'key-required'],
    input: buyDealRequest,
    reply: ok(dealValue),
    route: {
      method: 'POST',
      path: '/buy/deals',
      summary: 'Open a buy deal for a VIN: its id, state OPENED and checklist.',
      key: 'required',
      answers: 'Deal@1',
    },
  }),
  dealsGet: op({
    name: 'deals.get',
    subject: 'sys.workflows.deals.get',
    pillar: 'workflows',
    idempotent: true,
    codes: ['deal-not-found', 'key-required'],
    input: z.object({ dealId: id('deal_', 'deal') }),
    reply: ok(dealValue),
    route: {
      method: 'GET',
      path: '/buy/deals/{dealId}',
      summary: 'A deal, its state and checklist.',
      key: 'required',
      answers: 'Deal@1',
    },
  }),
  dealsAdvance: op({
    name: 'deals.advance',
    subject: 'sys.workflows.deals.advance',
    pillar: 'workflows',
    idempotent: false,
    codes: [
      'deal-not-found',
      'deal-step-conflict',
      'key-required',
      'NEEDS_HUMAN',
      'offer-declined',
      'execution-failed',
    ],
    // It may run several free steps (their failures keep their codes) and open an offer or a handoff.
    passesCapabilityCodes: true,
    timeouts: 3,
    input: z.object({ dealId: id('deal_', 'deal') }),
    reply: z.union([ok(dealValue), offerAnswer, needsHuman]),
    route: {
      method: 'POST',
      path: '/buy/deals/{dealId}/advance',
      summary: 'Run the deal to its next human act, offer or the end.',
      key: 'required',
      answers: 'Deal@1',
    },
  }),
  connectionsSubmit: op({
    name: 'connections.submit',
    subject: 'sys.services.connections.submit',
    pillar: 'services',
    idempotent: false,
    codes: ['invalid-input', 'key-required'],
    input: connectionSubmission,
    reply: ok(connectionValue),
    route: {
      method: 'POST',
      path: '/connections',
      summary: 'Go live: submit a connection (a credential for a dealer system or consumer account).',
      key: 'required',
      answers: 'Connection@1',
    },
  }),
  connectionsQueue: op({
    name: 'connections.queue',
    subject: 'sys.services.connections.queue',
    pillar: 'services',
    idempotent: true,
    codes: [],
    input: z.object({}),
    reply: ok(
      z.object({ entries: z.array(queueEntry), mine: z.array(z.object({ id: z.string(), place: z.number().int() })) }),
    ),
    route: {
      method: 'GET',
      path: '/activation-queue',
      summary: 'The activation queue: every connection waiting, ranked, yours marked.',
      key: 'required',
      answers: 'ActivationQueue@1',
    },
  }),
} as const;

export type Ops = typeof ops;
export type OpKey = keyof Ops;
/**
 * The operations a pillar serves, by key: its implementation map is typed from this, so a missing one is a compile
 * error.
 */
export type OpKeysOf<P extends Pillar> = { [K in OpKey]: Ops[K]['pillar'] extends P ? K : never }[OpKey];
export type OpInput<K extends OpKey> = z.infer<Ops[K]['input']>;
/**
 * What a caller of an operation gets: its declared reply, or a BLOCKED refusal (a declared code or the
 * transport's).
 */
export type OpAnswer<O extends Op> = z.output<O['reply']> | BlockedAnswer;
/** The typed members an operation sends beside its answer (`Op.meta`), or never. */
export type OpMeta<O extends Op> = NonNullable<O['meta']> extends z.ZodType ? z.output<NonNullable<O['meta']>> : never;
/** What the server of operation `K` returns: its declared answer or a refusal, and its typed members beside it. */
export type OpReplyOf<K extends OpKey> = OpReply<OpAnswer<Ops[K]>, OpMeta<Ops[K]>>;
export const opList: readonly Op[] = Object.values(ops);

/** The BLOCKED codes `o` may answer: its own and the transport's (none checked when it passes on a capability's). */
export const codesOf = (o: Op): readonly BlockedCode[] => [...o.codes, ...transportCodes];

/**
 * Broadcasts (fan-out, nothing stored): declared beside the operations, each with its payload schema, parsed by
 * every listener.
 */
export const broadcasts = {
  /** A key was rotated, revoked or scoped: every gateway drops its cached row at once (platform keys cache). */
  keysChanged: { subject: 'sys.keys.changed', payload: z.object({ prefix: z.string().min(1).max(100) }) },
} as const;
