import { z } from 'zod';

export const pillars = ['data', 'services', 'commerce', 'workflows'] as const;
export type Pillar = (typeof pillars)[number];
export type Facet = 'data' | 'services' | 'commerce';
export type Gate = 'none' | 'key' | 'offer' | 'human';
export type Mode = 'live' | 'sandbox' | 'declared';
export type HumanVerb = 'authorize' | 'notarize' | 'sign' | 'pay';

/**
 * Price as data. `ceiling` is the most one call can cost, take-rates included (x402 `upto`). Money and rates are
 * decimal strings (`"1.00"`, `"0.029"`), never floats: the catalog digest, /pricing and generated text carry them
 * exactly as written here.
 */
export type Price =
  | { model: 'free' }
  | { model: 'metered'; amount: string; currency: 'USD'; per: string; ceiling: string }
  | { model: 'flat'; amount: string; currency: 'USD'; ceiling: string }
  | { model: 'take-rate'; rate: string; base: string; amount: string; currency: 'USD'; ceiling: string };

/**
 * When an event is emitted: `run` every time the capability executes, `success` on the happy path,
 * `failure` under a failure trigger, `outcome` only when the handler chooses it (e.g. confirmed vs repairable).
 */
export type EventWhen = 'run' | 'success' | 'failure' | 'outcome';
/**
 * A capability's event. Its `data` is the capability's value (with `extra`, the members the handler adds beside it),
 * or `failureData` when it fails: `eventDataSchema` (catalog.ts) gives the schema, the catalog and docs/events.md
 * list it.
 */
export interface EventDecl {
  type: `${string}.${string}@${number}`;
  when: EventWhen;
  extra?: z.ZodObject;
}

export interface Trigger {
  /** Value of the `Sandbox-Trigger` header. */
  name: string;
  /** The answer kind it forces, and what it does. */
  forces: 'OK' | 'EMPTY' | 'BLOCKED' | 'OFFER';
  description: string;
}

export interface HumanGate {
  verb: HumanVerb;
  credential: string;
  terminus: { name: string; staffed: string; price: string };
}

export interface CapabilitySpec<Req extends z.ZodObject = z.ZodObject, Val extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  gate: Gate;
  mode: Mode;
  facet: Facet;
  summary: string;
  request: Req;
  answer: `${string}@${number}`;
  value: Val;
  events: EventDecl[];
  price: Price;
  human?: HumanGate;
  triggers?: Trigger[];
  /** Extra notes shown in the catalog (for example: requires a mandate when delegated). */
  notes?: string[];
  /** `when-delegated`: a call made on someone's behalf must carry a Mandate (403 mandate-required otherwise). */
  mandate?: 'when-delegated';
  /**
   * The code a failed execution answers (the sandbox trigger `fail`); `payment-failed` for the verbs that move
   * money.
   */
  failureCode?: 'execution-failed' | 'payment-failed';
  /**
   * Its success changes the calling key's standing (rotated, revoked, scoped): every gateway drops its cached key
   * row.
   */
  changesKey?: true;
}

export interface Capability<
  Req extends z.ZodObject = z.ZodObject,
  Val extends z.ZodType = z.ZodType,
> extends CapabilitySpec<Req, Val> {
  noun: string;
  verb: string;
  /** Wire name `noun.verb`. */
  name: string;
  pillar: Pillar;
  /** NATS subject the pillar's replicas answer on (queue group = pillar). */
  subject: string;
  triggers: Trigger[];
}

export interface NounSpec<
  Caps extends Record<string, CapabilitySpec<any, any>>,
  Name extends string = string,
  P extends Pillar = Pillar,
> {
  noun: Name;
  pillar: P;
  /** The spec's display pillar (Data, Services, Commerce, Workflows, AI). */
  displayPillar: string;
  entity: string;
  summary: string;
  /** The noun's door: landing `/<door>` and VIN lens `/<door>/<vin>`. */
  door: string;
  capabilities: Caps;
}

export interface Noun<
  Caps extends Record<string, CapabilitySpec<any, any>> = Record<string, CapabilitySpec<any, any>>,
  Name extends string = string,
  P extends Pillar = Pillar,
> extends Omit<NounSpec<Caps, Name, P>, 'capabilities'> {
  capabilities: { [K in keyof Caps]: Capability<Caps[K]['request'], Caps[K]['value']> };
  facets: Record<Facet, number>;
}

/** Every capability can be forced to these outcomes in the sandbox; capabilities add their own. */
export const commonTriggers: Trigger[] = [
  { name: 'empty', forces: 'EMPTY', description: 'Answer EMPTY: the question is valid but there is nothing to say.' },
  {
    name: 'blocked',
    forces: 'BLOCKED',
    description: 'Answer BLOCKED (422, code sandbox-blocked) as if the counterparty refused.',
  },
];

/**
 * The noun's name and pillar stay literal types, so each pillar's handler map is typed from the catalog (platform
 * PillarHandlers).
 */
export function defineNoun<
  const Caps extends Record<string, CapabilitySpec<any, any>>,
  const Name extends string,
  const P extends Pillar,
>(spec: NounSpec<Caps, Name, P>): Noun<Caps, Name, P> {
  const caps = {} as Record<string, Capability>;
  const facets: Record<Facet, number> = { data: 0, services: 0, commerce: 0 };
  for (const [verb, c] of Object.entries(spec.capabilities)) {
    facets[c.facet]++;
    const extra: Trigger[] = [];
    if (c.gate === 'offer') {
      extra.push(
        {
          name: 'offer-declined',
          forces: 'BLOCKED',
          description: 'Settling the intent is declined (409, code offer-declined); the intent is marked failed.',
        },
        {
          name: 'offer-expired',
          forces: 'BLOCKED',
          description: 'The intent is created already expired; settling it answers 410 intent-expired.',
        },
      );
    }
    if (c.events.some((e) => e.when === 'failure')) {
      extra.push({
        name: 'fail',
        forces: 'BLOCKED',
        description: `Execution fails and emits ${c.events
          .filter((e) => e.when === 'failure')
          .map((e) => e.type)
          .join(', ')}.`,
      });
    }
    if (c.gate === 'human') {
      extra.push(
        {
          name: 'human-completed',
          forces: 'OK',
          description: 'The handoff is completed at once by the sandbox desk; poll it to read the result.',
        },
        {
          name: 'human-refused',
          forces: 'BLOCKED',
          description: 'The handoff is refused by the sandbox desk; the poll rail says refused.',
        },
      );
    }
    caps[verb] = {
      ...c,
      noun: spec.noun,
      verb,
      name: `${spec.noun}.${verb}`,
      pillar: spec.pillar,
      subject: `cap.${spec.pillar}.${spec.noun}.${verb}`,
      triggers: [...commonTriggers, ...extra, ...(c.triggers ?? [])],
    };
  }
  return { ...spec, capabilities: caps as Noun<Caps, Name, P>['capabilities'], facets };
}

/** A noun that is only named: it appears in the catalog with its counts, and publishes no operations yet. */
export interface NamedNoun {
  noun: string;
  pillar: Pillar;
  displayPillar: string;
  capabilityCount: number;
  mode: 'sandbox';
  published: false;
  summary: string;
}

// Shared request shapes.
export const noInput = z.object({}).strict();

/**
 * The spec's catalog address of a capability: `/catalog/<noun>#<verb>` (the anchor is the wire name without the
 * noun).
 */
export const catalogAddress = (c: { noun: string; verb: string }) => `/catalog/${c.noun}#${c.verb}`;
