import { z } from 'zod';
import { decimalString, money } from './answer.ts';

/**
 * A delegation mandate (modelled on AP2 intent mandates): what an agent may spend on a principal's behalf.
 * It rides on a call as `Mandate: <base64url JSON>`; its spend is tracked per (principal, id).
 */
export const tripwire = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('capability-not-in'),
      capabilities: z
        .array(z.string())
        .min(1)
        .meta({ description: 'The only capabilities (noun.verb) the agent may call', example: ['signing.quote'] }),
    })
    .strict()
    .meta({ description: 'Halts any call to a capability outside the list' }),
  z
    .object({
      kind: z.literal('price-above'),
      amount: decimalString.meta({
        description: 'Halts any call whose hard ceiling is above this amount (a price jump)',
      }),
    })
    .strict(),
]);
export type Tripwire = z.infer<typeof tripwire>;

export const mandate = z
  .object({
    id: z.string().min(1).max(100).meta({
      description: "The principal's id for this mandate; spend is totalled per (principal, id)",
      example: 'mnd_fleet_q1',
    }),
    principal: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'On whose behalf the agent acts', example: 'acct_principal' }),
    ceiling: money.meta({ description: 'Total the agent may spend under this mandate, over all calls' }),
    perAction: money.meta({ description: 'The most one call may cost (its hard ceiling)' }),
    expires: z.iso
      .datetime({ offset: true })
      .meta({ description: 'Nothing runs under the mandate at or after this instant' }),
    tripwires: z.array(tripwire).default([]).meta({ description: 'Conditions that halt a call with BLOCKED tripwire' }),
    signature: z
      .string()
      .optional()
      .meta({ description: "The principal's signature; carried, not verified in the sandbox" }),
  })
  .strict();
export type Mandate = z.infer<typeof mandate>;

/** Decimal text ("12.50", "3", "3.5") to integer cents; null when it is not money. */
export function toCents(amount: string): number | null {
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(amount.trim());
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0'));
}
export const fromCents = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

export type MandateViolation = {
  code: 'mandate-expired' | 'mandate-per-action-exceeded' | 'tripwire' | 'invalid-mandate';
  message: string;
  tripwire?: Tripwire;
};

/**
 * The checks that need no ledger: expiry, currency, perAction and tripwires, for one call whose most
 * possible cost is `ceilingCents`. The running total against `ceiling` is kept by commerce under a row lock.
 */
export function checkMandate(
  m: Mandate,
  call: { capability: string; ceilingCents: number; currency: string; now: Date },
): MandateViolation | null {
  if (new Date(m.expires).getTime() <= call.now.getTime())
    return {
      code: 'mandate-expired',
      message: `the mandate ${m.id} expired at ${m.expires}; ask the principal for a new one`,
    };
  if (m.ceiling.currency !== m.perAction.currency || (call.ceilingCents > 0 && m.ceiling.currency !== call.currency)) {
    return {
      code: 'invalid-mandate',
      message: `the mandate is in ${m.ceiling.currency} but ${call.capability} is priced in ${call.currency}`,
    };
  }
  for (const t of m.tripwires) {
    if (t.kind === 'capability-not-in' && !t.capabilities.includes(call.capability)) {
      return {
        code: 'tripwire',
        message:
          `tripwire capability-not-in: ${call.capability} is not among the mandate's capabilities ` +
          `(${t.capabilities.join(', ')})`,
        tripwire: t,
      };
    }
    if (t.kind === 'price-above' && call.ceilingCents > (toCents(t.amount) ?? 0)) {
      return {
        code: 'tripwire',
        message:
          `tripwire price-above: ${call.capability} can cost ${fromCents(call.ceilingCents)} ${call.currency}, ` +
          `above ${t.amount}`,
        tripwire: t,
      };
    }
  }
  if (call.ceilingCents > (toCents(m.perAction.amount) ?? 0)) {
    return {
      code: 'mandate-per-action-exceeded',
      message:
        `${call.capability} can cost ${fromCents(call.ceilingCents)} ${call.currency}, ` +
        `above the mandate's perAction ${m.perAction.amount}`,
    };
  }
  return null;
}
