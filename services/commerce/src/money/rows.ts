import { z } from 'zod';
import { lifecycles, type PillarAnswer } from '@vcs/contract';
import type { CallContext, Sql } from '@vcs/platform';

/**
 * The rows of commerce's money tables as the store returns them, parsed, never cast: a driver's row (`select *`:
 * timestamps as Date, jsonb as values) and a row a statement returns as JSON (platform `writeTogether`: timestamps as
 * ISO text) both parse. Every money file reads its rows through these, so a column renamed in a migration fails here,
 * on the row, not three calls later.
 */

const when = z.union([z.string(), z.date()]);
const whenOrNull = when.nullable();
const count = z.union([z.string(), z.number(), z.bigint()]);
const stateOf = <K extends keyof typeof lifecycles>(k: K) =>
  z.enum(lifecycles[k].states as unknown as [(typeof lifecycles)[K]['states'][number], ...string[]]) as z.ZodType<
    (typeof lifecycles)[K]['states'][number]
  >;

export const intentRow = z.looseObject({
  id: z.string(),
  account_id: z.string().nullable(),
  capability: z.string(),
  input: z.unknown(),
  trigger: z.string().nullable(),
  origin: z.unknown(),
  price: z.unknown(),
  ceiling: z.unknown(),
  ceiling_cents: count,
  status: stateOf('intent'),
  expires_at: when,
  claimed_at: whenOrNull,
  executions: z.number(),
  mandate_principal: z.string().nullable(),
  mandate_id: z.string().nullable(),
  answer: z.unknown(),
  answer_status: z.number().nullable(),
  created_at: when,
  settled_at: whenOrNull,
  charged_cents: count.nullable(),
  payment_id: z.string().nullable(),
  /** When a paid answer reached its payer; null while it is owed. */
  delivered_at: whenOrNull,
});
export type IntentRow = z.infer<typeof intentRow>;

export const paymentRow = z.looseObject({
  id: z.string(),
  intent_id: z.string(),
  network: z.string(),
  asset: z.string(),
  pay_to: z.string(),
  payer: z.string(),
  nonce: z.string(),
  amount_atomic: z.string(),
  valid_before: z.string(),
  x402_version: z.number(),
  payload: z.unknown(),
  requirements: z.unknown(),
  status: stateOf('payment'),
  reason: z.string().nullable(),
  transaction: z.string().nullable(),
  lease_until: whenOrNull,
  account_id: z.string().nullable(),
  key_id: z.string().nullable(),
  environment: z.enum(['sandbox', 'live']).nullable(),
  payment_identifier: z.string().nullable(),
  /** When the answer it paid for reached its payer (as its intent's): owed no more. */
  delivered_at: whenOrNull,
  created_at: when,
  updated_at: when,
});
export type PaymentRow = z.infer<typeof paymentRow>;

export type ExecutionSource = 'intent' | 'handoff' | 'deal';

export const executionRow = z.looseObject({
  id: z.string(),
  source: z.enum(['intent', 'handoff', 'deal']),
  source_id: z.string(),
  capability: z.string(),
  input: z.unknown(),
  ctx: z.unknown(),
  origin: z.unknown(),
  status: stateOf('execution'),
  lease_until: whenOrNull,
  attempts: z.number(),
  answer: z.unknown(),
  answer_status: z.number().nullable(),
  created_at: when,
  finished_at: whenOrNull,
});
export type ExecutionRow = z.infer<typeof executionRow>;

/**
 * What an execution carries of its caller's context: who, which environment, the trigger, the mandate — and for a
 * paid intent, the payment held for it (the paid call's `executed` step charges or voids it).
 */
export type StoredContext = Pick<
  CallContext,
  'account' | 'keyId' | 'environment' | 'trigger' | 'intentId' | 'mandate'
> & {
  paymentId?: string | null;
};
/** An execution's stored context (written by `executionInsert` from a `StoredContext`). */
export const contextOf = (ex: Pick<ExecutionRow, 'ctx'>): StoredContext => jsonValue(ex.ctx) as StoredContext;

/** A jsonb value as stored (an object) or as text (a driver that returns jsonb as text). */
export const jsonValue = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/** A statement whose `returning` row parses as `R` (platform `writeTogether` reads it with `row`). */
export type RowSql<R> = Sql & { row: (v: unknown) => R };
/** `sql` whose returned row is parsed by `schema`. */
export const returning = <R>(schema: z.ZodType<R>, sql: Sql): RowSql<R> => ({ ...sql, row: (v) => schema.parse(v) });

/** Each table's row, by the lifecycle entity commerce moves in it (`transition.ts`). */
export const rowSchemas = {
  intent: intentRow,
  payment: paymentRow,
  execution: executionRow,
} as const;

/** A stored answer (an intent's, an execution's, a handoff's result): written by commerce from a `PillarAnswer`. */
export const storedAnswer = (v: unknown) => jsonValue(v) as PillarAnswer;
/** A stored answer that may be absent (an intent not settled yet). */
export const storedAnswerOrNull = (v: unknown) => (v === null || v === undefined ? null : storedAnswer(v));

const origin = z.object({ dealId: z.string(), step: z.number() });
/** A record's origin (a deal step's), or null. */
export const originOf = (v: unknown): z.infer<typeof origin> | null => {
  const o = jsonValue(v);
  return o === null || o === undefined ? null : origin.parse(o);
};

const amount = z.looseObject({ amount: z.string(), currency: z.string() });
/** A price or a ceiling as stored (the offer's terms). */
export const amountOf = (v: unknown): z.infer<typeof amount> => amount.parse(jsonValue(v));

/** A jsonb object column (a handoff's terminus, an input). */
export const objectOf = (v: unknown): Record<string, unknown> => z.record(z.string(), z.unknown()).parse(jsonValue(v));
