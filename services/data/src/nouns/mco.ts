import type { mco } from '@vcs/contract';
import { ok, type NounHandlers } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, SANDBOX_PAYER, Seeded, sandboxDate, stableId, vehicleFacts } from '@vcs/sandbox';

// One Title per VIN: the same titleId, state and brands on every mco answer.
function titleOf(vin: string) {
  const s = new Seeded(vin, 'mco');
  return {
    vin,
    noun: 'mco',
    asOf: sandboxDate(),
    titleId: stableId('ttl_', vin),
    state: vehicleFacts(vin).jurisdiction, // the same jurisdiction totalLoss uses
    brands: s.next() < 0.25 ? ['salvage'] : [],
    docType: 'MCO',
    status: 'Ordered',
  };
}
const vinOf = (input: { vin?: string }) => input.vin ?? SANDBOX_DEFAULT_VIN;

export const mcoHandlers: NounHandlers<typeof mco> = {
  async status(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, certificate: { standing: 'on-file', titlePosition: 'with-manufacturer' } });
  },
  async verify(input) {
    const t = titleOf(vinOf(input));
    return ok({
      ...t,
      verification: {
        verified: true,
        status: 'verified-with-issuer',
        titleId: t.titleId,
        titlePosition: 'with-manufacturer',
      },
    });
  },
  async fee(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, fee: { status: 'certificate-fee-posted' }, payer: SANDBOX_PAYER });
  },
  async assign(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, assignment: { status: 'assigned-to-buyer', titleId: t.titleId, titlePosition: 'with-dealer' } });
  },
  async pay(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, payment: { status: 'settled' }, payer: SANDBOX_PAYER });
  },
  async convert(input) {
    const t = titleOf(vinOf(input));
    return ok({
      ...t,
      conversion: { status: 'conversion-in-progress', titleId: t.titleId, titlePosition: 'with-authority' },
    });
  },
  async custody(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, custody: { status: 'surrendered-to-authority', titlePosition: 'with-authority' } });
  },
  async receive(input) {
    const t = titleOf(vinOf(input));
    return ok({ ...t, receipt: { status: 'received', titleId: t.titleId } });
  },
};
