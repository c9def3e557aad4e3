import { z } from 'zod';
import type { BlockedCode } from './codes.ts';
import type { Pillar } from './capability.ts';
import { connectionSubmission } from './connections.ts';
import { mandate } from './mandate.ts';
import { buyDealRequest } from './nouns/deal.ts';

/**
 * A platform operation: a bus message that is not a catalog capability (money rails, deals, connections, keys).
 * Like a capability it is declared once here, and its serving pillar, the gateway's route, the OpenAPI entry and
 * the callers all take it from this declaration.
 * On the wire: request `{ input, ctx }` on `subject` (queue group `pillar.<pillar>`); reply framed as a capability's
 * (`<status> <kind> <served-by>[ replayed]\n<answer JSON>`, platform/src/bus/call.ts).
 */
export interface Op<I extends z.ZodType = z.ZodType, P extends Pillar = Pillar> {
  /** `<noun>.<verb>`, also the OpenAPI operationId. */
  readonly name: string;
  readonly subject: string;
  readonly pillar: P;
  readonly input: I;
  /** Safe to send twice (a read): the caller retries it once when a replica died or did not answer. */
  readonly idempotent: boolean;
  /** The BLOCKED codes it may answer besides the transport's (pillar-unavailable, store-unavailable, internal). */
  readonly codes: readonly BlockedCode[];
  /** The HTTP face, when it has one: path parameters are input members of the same name. */
  readonly route?: { method: 'GET' | 'POST'; path: string; summary: string; key: 'required' | 'optional' | 'none'; answers: string };
}

/** What a platform operation answers: the HTTP status, the answer, and whether it is a stored answer replayed. */
export interface OpReply { status: number; answer: Record<string, unknown>; replayed?: boolean }

const op = <I extends z.ZodType, const P extends Pillar>(o: Op<I, P>): Op<I, P> => o;
const id = (prefix: string, what: string) => z.string().min(1).max(200).meta({ description: `The ${what} id (${prefix}…)` });
/**
 * An input member the gateway sets (a header's value, the time-out it waits), never taken from the caller's body:
 * the route drops it from the body and the OpenAPI document leaves it out.
 */
const setByGateway = <T extends z.ZodType>(s: T): T => s.meta({ setByGateway: true });
export const setByGatewayMembers = (o: Op): string[] =>
  Object.entries((o.input as unknown as z.ZodObject).shape ?? {}).filter(([, v]) => (v as z.ZodType).meta()?.setByGateway).map(([k]) => k);
/** How long the pillar may take before it answers a time-out itself (the gateway waits a little longer). */
const timeoutMs = setByGateway(z.number().int().min(100).max(120_000).optional());
/** Where an intent or handoff came from: the deal and the step position that opened it. */
const origin = z.object({ dealId: z.string(), step: z.number().int().min(1) }).optional();

export const ops = {
  keysMint: op({
    name: 'keys.mint', subject: 'sys.commerce.keys.mint', pillar: 'commerce', input: z.object({}), idempotent: false, codes: [],
    route: { method: 'POST', path: '/keys', summary: 'Mint an anonymous sandbox key and its account (no body).', key: 'none', answers: 'ApiKeyMinted@1' },
  }),
  keysLookup: op({
    // The gateway checks keys through commerce, which owns their table; it caches the row for a few seconds.
    name: 'keys.lookup', subject: 'sys.commerce.keys.lookup', pillar: 'commerce', idempotent: true, codes: [],
    input: z.object({ prefix: z.string().min(1).max(100) }),
  }),
  intentsCreate: op({
    name: 'intents.create', subject: 'sys.commerce.intents.create', pillar: 'commerce', idempotent: false, codes: ['invalid-input'],
    input: z.object({ capability: z.string(), input: z.record(z.string(), z.unknown()), origin }),
  }),
  intentsGet: op({
    name: 'intents.get', subject: 'sys.commerce.intents.get', pillar: 'commerce', idempotent: true, codes: ['intent-not-found', 'intent-other-account'],
    input: z.object({ intentId: id('pi_', 'intent') }),
    route: { method: 'GET', path: '/intents/{intentId}', summary: "An intent's state: pending, settled (with its answer), expired or failed.", key: 'optional', answers: 'Intent@1' },
  }),
  intentsSettle: op({
    name: 'intents.settle', subject: 'sys.commerce.intents.settle', pillar: 'commerce', idempotent: false,
    codes: ['intent-not-found', 'intent-other-account', 'intent-expired', 'offer-declined', 'idempotency-in-flight', 'forbidden', 'invalid-mandate', 'mandate-ceiling-exceeded', 'mandate-per-action-exceeded', 'mandate-expired', 'payment-failed', 'execution-failed'],
    input: z.object({ intentId: id('pi_', 'intent'), mandate: setByGateway(mandate.optional()), timeoutMs }),
    route: { method: 'POST', path: '/intents/{intentId}/settle', summary: 'Settle the intent of a 402 OFFER; the capability then executes, once.', key: 'required', answers: 'the capability\'s answer' },
  }),
  handoffsCreate: op({
    name: 'handoffs.create', subject: 'sys.commerce.handoffs.create', pillar: 'commerce', idempotent: false, codes: ['NEEDS_HUMAN'],
    input: z.object({ verb: z.enum(['authorize', 'notarize', 'sign', 'pay']), credential: z.string(), capability: z.string().nullable(), input: z.record(z.string(), z.unknown()).nullable(), origin }),
  }),
  handoffsGet: op({
    name: 'handoffs.get', subject: 'sys.commerce.handoffs.get', pillar: 'commerce', idempotent: true, codes: ['handoff-not-found'],
    input: z.object({ handoffId: id('ho_', 'handoff') }),
    route: { method: 'GET', path: '/handoffs/{handoffId}', summary: 'Poll a NEEDS_HUMAN handoff.', key: 'required', answers: 'Handoff@1' },
  }),
  handoffsComplete: op({
    name: 'handoffs.complete', subject: 'sys.commerce.handoffs.complete', pillar: 'commerce', idempotent: false, codes: ['handoff-not-found', 'forbidden', 'invalid-input', 'idempotency-in-flight', 'human-refused'],
    input: z.object({
      handoffId: id('ho_', 'handoff'),
      outcome: z.enum(['completed', 'refused']).meta({ description: 'What the human did' }),
      credential: z.string().min(1).meta({ description: 'The credential the handoff names, for example "notary"' }),
      timeoutMs,
    }),
    route: { method: 'POST', path: '/handoffs/{handoffId}/complete', summary: 'The credentialed human completes or refuses a handoff.', key: 'required', answers: 'Handoff@1' },
  }),
  dealsForVin: op({
    // The VIN record shows the deals on a car; workflows owns them.
    name: 'deals.forVin', subject: 'sys.workflows.deals.forVin', pillar: 'workflows', idempotent: true, codes: [],
    input: z.object({ vin: z.string().min(1).max(17) }),
  }),
  dealsOpen: op({
    name: 'deals.create', subject: 'sys.workflows.deals.open', pillar: 'workflows', idempotent: false, codes: ['invalid-input'], input: buyDealRequest,
    route: { method: 'POST', path: '/buy/deals', summary: 'Open a buy deal for a VIN: its id, state OPENED and checklist.', key: 'required', answers: 'Deal@1' },
  }),
  dealsGet: op({
    name: 'deals.get', subject: 'sys.workflows.deals.get', pillar: 'workflows', idempotent: true, codes: ['deal-not-found'],
    input: z.object({ dealId: id('deal_', 'deal') }),
    route: { method: 'GET', path: '/buy/deals/{dealId}', summary: 'A deal, its state and checklist.', key: 'required', answers: 'Deal@1' },
  }),
  dealsAdvance: op({
    name: 'deals.advance', subject: 'sys.workflows.deals.advance', pillar: 'workflows', idempotent: false, codes: ['deal-not-found', 'deal-step-conflict'],
    input: z.object({ dealId: id('deal_', 'deal') }),
    route: { method: 'POST', path: '/buy/deals/{dealId}/advance', summary: 'Run the deal to its next human act, offer or the end.', key: 'required', answers: 'Deal@1' },
  }),
  connectionsSubmit: op({
    name: 'connections.submit', subject: 'sys.services.connections.submit', pillar: 'services', idempotent: false, codes: ['invalid-input'], input: connectionSubmission,
    route: { method: 'POST', path: '/connections', summary: 'Go live: submit a connection (a credential for a dealer system or consumer account).', key: 'required', answers: 'Connection@1' },
  }),
  connectionsQueue: op({
    name: 'connections.queue', subject: 'sys.services.connections.queue', pillar: 'services', idempotent: true, codes: [], input: z.object({}),
    route: { method: 'GET', path: '/activation-queue', summary: 'The activation queue: every connection waiting, ranked, yours marked.', key: 'required', answers: 'ActivationQueue@1' },
  }),
} as const;

export type Ops = typeof ops;
export type OpKey = keyof Ops;
/** The operations a pillar serves, by key: its implementation map is typed from this, so a missing one is a compile error. */
export type OpKeysOf<P extends Pillar> = { [K in OpKey]: Ops[K]['pillar'] extends P ? K : never }[OpKey];
export type OpInput<K extends OpKey> = z.infer<Ops[K]['input']>;
export const opList: readonly Op[] = Object.values(ops);
