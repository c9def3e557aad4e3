import { capabilityByName, type DealStep, type HumanVerb } from '@vcs/contract';
import { Seeded, stableId } from '@vcs/sandbox';
import { stateOfZip } from './zip.ts';

/** What a step's input is built from: the deal, and facts earlier steps posted for the VIN. */
export interface StepInputSource {
  vin: string;
  buyer: { name: string; zip: string } | null;
  /** The value a capability last posted for this VIN (vin_facts), or null. */
  fact(capability: string): Promise<Record<string, unknown> | null>;
}

export interface StepDef {
  step: string;
  title: string;
  why: string;
  /** The capability that fulfils the step; null for a pure human act (a handoff with no capability). */
  capability: string | null;
  /** For a pure human act: its verb and the credential the person must hold. */
  human?: { verb: HumanVerb; credential: string };
  input(src: StepInputSource): Promise<Record<string, unknown> | null>;
}

const vinOnly = async (s: StepInputSource) => ({ vin: s.vin });

/** The sandbox dealer the car ships from: one of a few rooftops, stable per VIN. */
export function dealerZip(vin: string): string {
  return new Seeded(vin, 'dealer').pick(['94103', '78701', '10001', '60601', '33131']);
}
const buyerZip5 = (s: StepInputSource) => (s.buyer?.zip ?? dealerZip(s.vin)).slice(0, 5);

/**
 * The buy workflow, in the order a dealer's F&I desk runs a remote sale: know the car, prove its
 * condition, price delivery and paperwork, put the power of attorney in place (notarized) so the
 * dealer can title on the buyer's behalf, get the buyer's go-ahead before anything is signed, sign,
 * release and move the money, and only then hand the title over. docs/deals.md says why at each step.
 */
export const buyChecklist: StepDef[] = [
  {
    step: 'decode',
    title: 'Decode and confirm the vehicle',
    capability: 'vehicle.decode',
    input: vinOnly,
    why:
      'Everything after it (inspection, transport, title) is about this exact car; ' +
      'a bad VIN must stop the deal before money moves.',
  },
  {
    step: 'frameInspection',
    title: 'Order a frame inspection',
    capability: 'frameInspection.order',
    input: vinOnly,
    why: 'Structural damage changes the price or kills the deal, so it is known before any paperwork is drawn.',
  },
  {
    step: 'transport',
    title: 'Quote delivery to the buyer',
    capability: 'transport.quote',
    input: async (s) => ({ vin: s.vin, from: dealerZip(s.vin), to: buyerZip5(s) }),
    why: 'Delivery cost is part of the out-the-door price the buyer agrees to.',
  },
  {
    step: 'signingQuote',
    title: 'Quote the signing ceremony',
    capability: 'signing.quote',
    input: vinOnly,
    why: 'The fee and payer of the ceremony go into the deal figures before documents are generated.',
  },
  {
    step: 'poa',
    title: 'Generate the power of attorney',
    capability: 'poa.generate',
    input: async (s) => ({ vin: s.vin, state: stateOfZip(buyerZip5(s)) ?? stateOfZip(dealerZip(s.vin)) ?? 'CA' }),
    why: "A remote buyer cannot stand at the DMV; the POA, for the buyer's state, lets the dealer title for them.",
  },
  {
    step: 'notarize',
    title: 'Notarize the power of attorney',
    capability: 'poa.notarize',
    input: async (s) => ({ documentId: documentIdOf(await s.fact('poa.generate'), s.vin), mode: 'ron' }),
    why: 'Most states accept a POA for titling only when notarized; a notary (a person) must do it.',
  },
  {
    step: 'authorize',
    title: 'Buyer authorizes the deal',
    capability: null,
    human: { verb: 'authorize', credential: 'buyer' },
    input: async () => null,
    why:
      'The buyer approves the figures (car, inspection, delivery, fees) ' +
      'before anything binding is routed for signature.',
  },
  {
    step: 'collectSignatures',
    title: 'Route the packet for signatures',
    capability: 'signing.collectSignatures',
    input: vinOnly,
    why: "The buyer's order, odometer statement and title forms go out as one packet.",
  },
  {
    step: 'sign',
    title: 'Buyer signs the packet',
    capability: null,
    human: { verb: 'sign', credential: 'buyer' },
    input: async () => null,
    why: 'Signing is a human act with legal weight; no agent may do it.',
  },
  {
    step: 'payApproval',
    title: 'Buyer releases the funds',
    capability: null,
    human: { verb: 'pay', credential: 'buyer' },
    input: async () => null,
    why: 'A person releases the money before any charge runs; the rail below only moves what was released.',
  },
  {
    step: 'payment',
    title: 'Take the payment',
    capability: 'signing.pay',
    input: vinOnly,
    why: 'Money moves only after the buyer signed and released it, and before the title leaves the dealer.',
  },
  {
    step: 'titleAssign',
    title: 'Assign the title to the buyer',
    capability: 'mco.assign',
    input: vinOnly,
    why:
      'The certificate is assigned last: a dealer never hands over title before it is paid. ' +
      'Its completion settles the deal.',
  },
];

/** The document id poa.generate posted for the VIN; the sandbox's stable id when none is on file. */
function documentIdOf(v: Record<string, unknown> | null, vin: string): string {
  const doc = v?.document as Record<string, unknown> | undefined;
  const found = v?.id ?? v?.documentId ?? doc?.id ?? doc?.documentId;
  return typeof found === 'string' ? found : stableId('doc_', vin);
}

/** How a step arrives, from the catalog's gate of its capability (never restated here). */
export function kindOf(def: StepDef): {
  kind: DealStep['kind'];
  verb: HumanVerb | null;
  credential: string | null;
  missing: boolean;
} {
  if (!def.capability)
    return { kind: 'human', verb: def.human!.verb, credential: def.human!.credential, missing: false };
  const c = capabilityByName(def.capability);
  if (!c) return { kind: 'execute', verb: null, credential: null, missing: true };
  if (c.gate === 'offer') return { kind: 'offer', verb: null, credential: null, missing: false };
  if (c.gate === 'human')
    return {
      kind: 'human',
      verb: c.human?.verb ?? 'notarize',
      credential: c.human?.credential ?? 'notary',
      missing: false,
    };
  return { kind: 'execute', verb: null, credential: null, missing: false };
}

/** The fresh checklist of a new deal. */
export function newChecklist(): DealStep[] {
  return buyChecklist.map((d, i) => {
    const k = kindOf(d);
    return {
      position: i + 1,
      step: d.step,
      title: d.title,
      why: d.why,
      capability: d.capability,
      kind: k.kind,
      verb: k.verb,
      status: 'todo',
      attempts: 0,
      pending: null,
      outcome: null,
      startedAt: null,
      completedAt: null,
    };
  });
}

export function stepDef(position: number): StepDef {
  return buyChecklist[position - 1]!;
}
