import type { signing } from '@vcs/contract';
import { ok, type NounHandlers } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, SANDBOX_PAYER, Seeded, sandboxDate, stableId } from '@vcs/sandbox';

// One ceremony per VIN: its ids are stable so every signing answer about a VIN agrees.
function ceremonyOf(vin: string) {
  const s = new Seeded(vin, 'signing');
  const packetId = stableId('pkt_', vin);
  const dealId = stableId('deal_', vin);
  return {
    base: { vin, noun: 'signing', asOf: sandboxDate() },
    id: stableId('cer_', vin),
    packet: { packetId, kind: 'retail-purchase', position: 'Draft', subject: { dealId, position: 'QUOTED' } },
    signers: [
      {
        role: 'buyer',
        identityId: stableId('idn_', vin, 'buyer'),
        name: s.pick(['Avery Chen', 'Jordan Patel', 'Sam Rivera', 'Morgan Lee']),
        status: 'not-yet-requested',
      },
      {
        role: 'seller',
        identityId: stableId('idn_', vin, 'seller'),
        name: s.pick(['Bayview Motors', 'Cedar Auto Group', 'Northgate Cars']),
        status: 'not-yet-requested',
      },
    ],
    feeCents: s.int(12, 30) * 500,
    payer: SANDBOX_PAYER,
  };
}

const vinOf = (input: { vin?: string }) => input.vin ?? SANDBOX_DEFAULT_VIN;

export const signingHandlers: NounHandlers<typeof signing> = {
  async status(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, ceremony: { id: c.id, packet: c.packet, standing: 'not-yet-routed', position: 'Draft' } });
  },
  async packageLookup(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, package: c.packet });
  },
  async completenessCheck(input) {
    const c = ceremonyOf(vinOf(input));
    const checks = [
      { check: 'packet-on-file', pass: true },
      { check: 'routed-for-signature', pass: false },
      { check: 'all-signers-signed', pass: false },
    ];
    return ok({
      ...c.base,
      completeness: {
        complete: checks.every((x) => x.pass),
        standing: 'not-yet-routed',
        position: 'Draft',
        checks,
        signers: c.signers,
      },
    });
  },
  async quote(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, fee: { amountCents: c.feeCents, currency: 'USD', per: 'ceremony' }, payer: c.payer });
  },
  async fee(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, fee: { amountCents: c.feeCents, currency: 'USD', per: 'ceremony' }, payer: c.payer });
  },
  async schedule(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({
      ...c.base,
      session: {
        id: stableId('ses_', c.base.vin),
        packetId: c.packet.packetId,
        status: 'scheduled',
        scheduledFor: sandboxDate(3),
      },
    });
  },
  async pay(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({
      ...c.base,
      payment: {
        id: stableId('pay_', c.base.vin, 'signing-pay'),
        amountCents: c.feeCents,
        currency: 'USD',
        status: 'settled',
      },
      payer: c.payer,
    });
  },
  async complete(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, completion: { status: 'completed', standing: 'signed', position: 'Executed' } });
  },
  async collectSignatures(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, collection: { status: 'collected', position: 'Signed' } });
  },
  async dispatchAgent(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({
      ...c.base,
      dispatch: {
        status: 'dispatched',
        id: stableId('dsp_', c.base.vin),
        ceremonyId: c.id,
        packetId: c.packet.packetId,
        arrivesOn: sandboxDate(2),
      },
    });
  },
  async witness(input) {
    const c = ceremonyOf(vinOf(input));
    return ok({ ...c.base, witness: { status: 'witnessed', standing: 'signed', position: 'Witnessed' } });
  },
};
