import type { Capability, HumanVerb, Price } from './capability.ts';
import { toCents } from './mandate.ts';

/** What an offer-gated call costs and the most it can cost, read from the capability's catalog price. */
export function offerTerms(c: Capability): {
  price: { amount: string; currency: string };
  ceiling: { amount: string; currency: string };
  ceilingCents: number;
} {
  const p: Price = c.price;
  if (p.model === 'free')
    return {
      price: { amount: '0.00', currency: 'USD' },
      ceiling: { amount: '0.00', currency: 'USD' },
      ceilingCents: 0,
    };
  return {
    price: { amount: p.amount, currency: p.currency },
    ceiling: { amount: p.ceiling, currency: p.currency },
    ceilingCents: toCents(p.ceiling) ?? 0,
  };
}

/**
 * A decimal-string rate as a percentage, by moving the decimal point two places (no float arithmetic):
 * "0.029" → "2.9", "0.05" → "5", "0.1" → "10", "1" → "100".
 */
/**
 * What a capability's price pays for: an answer (flat and metered prices: a quote, a document, a lookup) or an act (a
 * take-rate on work dispatched or money moved, whatever it returns).
 */
export const pricedFor = (c: Capability): 'answer' | 'act' => (c.price.model === 'take-rate' ? 'act' : 'answer');

/**
 * Whether an answer is what the price pays for, so a payment for it is settled: OK always; EMPTY only when the price
 * is for an act; BLOCKED never (docs/decisions.md, "Paying only for an answer").
 */
export const worthItsPrice = (c: Capability, answerType: string): boolean =>
  answerType === 'OK' || (answerType === 'EMPTY' && pricedFor(c) === 'act');

export function percentText(rate: string): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (!m) throw new Error(`not a decimal rate: ${rate}`);
  const frac = (m[2] ?? '').padEnd(2, '0');
  const whole = (m[1]! + frac.slice(0, 2)).replace(/^0+(?=\d)/, '');
  const rest = frac.slice(2).replace(/0+$/, '');
  return rest ? `${whole}.${rest}` : whole;
}

/**
 * A price in words, the one wording for pages, the MCP search, the SDK's docs and the CLI; figures from the
 * catalog.
 */
export function priceText(p: Price): string {
  switch (p.model) {
    case 'free':
      return 'free';
    case 'metered':
      return `${p.amount} ${p.currency} per ${p.per} (ceiling ${p.ceiling})`;
    case 'flat':
      return `${p.amount} ${p.currency} flat (ceiling ${p.ceiling})`;
    case 'take-rate':
      return `${percentText(p.rate)}% of ${p.base}, sandbox quote ${p.amount} ${p.currency} (ceiling ${p.ceiling})`;
  }
}

/**
 * A price in a few characters, for listings of one line a capability (the front door, /llms.txt), which say the
 * currency once: the amount, the unit of a metered price, a take-rate's percentage and its ceiling (`5% ≤ 15.00`).
 * `priceText` says the rest.
 */
export function priceShort(p: Price): string {
  switch (p.model) {
    case 'free':
      return 'free';
    case 'metered':
      return `${p.amount} per ${p.per}`;
    case 'flat':
      return p.amount;
    case 'take-rate':
      return `${percentText(p.rate)}% ≤ ${p.ceiling}`;
  }
}

/** One row of GET /pricing, generated from the catalog. */
export function pricingRow(c: Capability) {
  const p = c.price;
  const base = { capability: c.name, method: c.method, path: c.path, gate: c.gate, facet: c.facet, model: p.model };
  if (p.model === 'free') return { ...base, currency: null, amount: '0.00', ceiling: '0.00' };
  if (p.model === 'take-rate')
    return { ...base, rate: p.rate, base: p.base, amount: p.amount, currency: p.currency, ceiling: p.ceiling };
  if (p.model === 'metered') return { ...base, amount: p.amount, per: p.per, currency: p.currency, ceiling: p.ceiling };
  return { ...base, amount: p.amount, currency: p.currency, ceiling: p.ceiling };
}

/** The sandbox desks that take a handoff when no capability names its own terminus. */
export const sandboxDesks: Record<
  HumanVerb,
  { credential: string; terminus: { name: string; staffed: string; price: string } }
> = {
  authorize: {
    credential: 'authorizer',
    terminus: { name: 'Sandbox Authorization Desk', staffed: 'always (sandbox)', price: '0.00 USD' },
  },
  notarize: {
    credential: 'notary',
    terminus: { name: 'Sandbox Notary Desk', staffed: 'always (sandbox)', price: '0.00 USD' },
  },
  sign: {
    credential: 'signer',
    terminus: { name: 'Sandbox Signing Desk', staffed: 'always (sandbox)', price: '0.00 USD' },
  },
  pay: {
    credential: 'payer',
    terminus: { name: 'Sandbox Payments Desk', staffed: 'always (sandbox)', price: '0.00 USD' },
  },
};

/**
 * Capabilities that need a mandate when called on someone else's behalf (a `Delegated-For` header or a mandate-bound
 * key).
 */
export function requiresMandateWhenDelegated(c: Capability): boolean {
  return c.mandate === 'when-delegated';
}
