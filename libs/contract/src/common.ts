import { z } from 'zod';
import { isoDate } from './answer.ts';
import { vin } from './vin.ts';
import type { Price } from './capability.ts';

/** `vin` optional, as most capabilities take it (query for GET, body for POST). */
export const vinOptional = z.object({ vin: vin.optional() }).strict();
export const vinRequired = z.object({ vin }).strict();

/** Members most values carry. */
export const valueBase = z.object({
  vin: z.string().meta({ description: 'The VIN the answer is about (a sandbox VIN when none was given)' }),
  noun: z.string().meta({ description: 'The noun that answered', example: 'signing' }),
  asOf: isoDate,
});

export const statusOnly = z.object({ status: z.string() });

export const payer = z.object({
  name: z.string(),
  castRow: z.string().meta({ example: 'super-prime' }),
  creditTier: z.string().meta({ example: 'super-prime' }),
});

export const signer = z.object({
  role: z.string().meta({ example: 'buyer' }),
  identityId: z.string(),
  name: z.string(),
  status: z.string().meta({ example: 'not-yet-requested' }),
});

// Prices are data: every figure on /pricing and in offers comes from these calls in the noun files.
export const price = {
  free: (): Price => ({ model: 'free' }),
  metered: (amount: string, per: string, ceiling = amount): Price => ({
    model: 'metered',
    amount,
    currency: 'USD',
    per,
    ceiling,
  }),
  flat: (amount: string, ceiling = amount): Price => ({ model: 'flat', amount, currency: 'USD', ceiling }),
  /**
   * A take-rate on dispatched work or on the deal: `rate` a decimal string fraction (`"0.029"` is 2.9 %), `amount`
   * the sandbox quote, `ceiling` caps the total.
   */
  takeRate: (rate: string, base: string, amount: string, ceiling: string): Price => {
    if (!/^0\.\d*[1-9]$/.test(rate))
      throw new Error(`take-rate ${rate}: a decimal string between 0 and 1, like "0.029"`);
    return { model: 'take-rate', rate, base, amount, currency: 'USD', ceiling };
  },
};
