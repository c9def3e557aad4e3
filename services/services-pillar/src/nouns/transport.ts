import type { transport } from '@vcs/contract';
import { ok, type NounHandlers } from '@vcs/platform';
import { Seeded, centsToDecimal, sandboxDate } from '@vcs/sandbox';

export const transportHandlers: NounHandlers<typeof transport> = {
  async quote(input) {
    const s = new Seeded(input.vin, `transport|${input.from}|${input.to}`);
    // Distance from the ZIP prefixes is crude but deterministic: the sandbox needs coherence, not geography.
    const miles = Math.max(
      25,
      Math.abs(Number(input.from.slice(0, 3)) - Number(input.to.slice(0, 3))) * 3 + s.int(10, 90),
    );
    const cents = 15000 + miles * 85;
    return ok({
      vin: input.vin,
      noun: 'transport',
      asOf: sandboxDate(),
      quote: {
        from: input.from,
        to: input.to,
        miles,
        amount: centsToDecimal(cents),
        currency: 'USD',
        pickupBy: sandboxDate(2),
        deliverBy: sandboxDate(2 + Math.ceil(miles / 500)),
      },
    });
  },
};
