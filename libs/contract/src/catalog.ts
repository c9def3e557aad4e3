import { priceText } from './money.ts';
import { sha256Hex } from './sha256.ts';
import { z } from 'zod';
import type { Capability, EventDecl, Noun, Pillar } from './capability.ts';
import { publicSchema } from './secret.ts';
import { failureData, isPlatformEventType, platformEvents, type EventEnvelope } from './events.ts';
import { apiKey } from './nouns/apiKey.ts';
import { deal } from './nouns/deal.ts';
import { frameInspection } from './nouns/frameInspection.ts';
import { mco } from './nouns/mco.ts';
import { namedNouns } from './nouns/named.ts';
import { poa } from './nouns/poa.ts';
import { signing } from './nouns/signing.ts';
import { totalLoss } from './nouns/totalLoss.ts';
import { transport } from './nouns/transport.ts';
import { vehicle } from './nouns/vehicle.ts';
import { webhook } from './nouns/webhook.ts';

/** Every published noun, in catalog order. Adding a noun here is all it takes to route, validate and document it. */
export const nouns = [
  apiKey,
  signing,
  mco,
  poa,
  webhook,
  frameInspection,
  totalLoss,
  vehicle,
  transport,
  deal,
] as const satisfies readonly Noun<any>[];
export { namedNouns };

export const capabilities: Capability[] = nouns.flatMap((n) => Object.values(n.capabilities) as Capability[]);

const byName = new Map(capabilities.map((c) => [c.name, c]));
export function capabilityByName(name: string): Capability | undefined {
  return byName.get(name);
}
export function capabilitiesOfPillar(pillar: Pillar): Capability[] {
  return capabilities.filter((c) => c.pillar === pillar);
}
export function nounByName(name: string): Noun<any> | undefined {
  return nouns.find((n) => n.noun === name);
}

/** JSON Schema of a zod schema as an input (request) or output (value). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
}

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
};
/** A JSON Schema's type in a few characters: `string`, `"in-person"|"ron"`, `string[]`, `object`. */
function typeText(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join('|');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.anyOf) return s.anyOf.map(typeText).join('|');
  if (s.type === 'array') return `${s.items ? typeText(s.items) : 'any'}[]`;
  return Array.isArray(s.type) ? s.type.join('|') : (s.type ?? 'any');
}

/** A capability's inputs with their types, `?` marking optional ones: `vin?: string, state: string`. */
export function inputsText(c: Capability): string {
  const schema = jsonSchemaOf(c.request, 'input') as JsonSchema;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(
    ([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeText(v)}`,
  );
  return fields.length ? fields.join(', ') : 'none';
}

/** What an agent needs to call a capability, in one line: route, gate, inputs (and where they go), answer, price. */
export function callLine(c: Capability): string {
  return (
    `\`${c.method} ${c.path}\` · gate ${c.gate} · ${c.method === 'GET' ? 'query' : 'JSON body'}: ${inputsText(c)}` +
    ` · answers ${c.answer} · ${priceText(c.price)}`
  );
}

/** A plain-JSON description of one capability: what discovery documents, the SDK and the digest are made of. */
export function describeCapability(c: Capability) {
  return {
    name: c.name,
    noun: c.noun,
    verb: c.verb,
    pillar: c.pillar,
    facet: c.facet,
    method: c.method,
    path: c.path,
    gate: c.gate,
    mode: c.mode,
    summary: c.summary,
    answer: c.answer,
    events: c.events,
    price: c.price,
    human: c.human ?? null,
    triggers: c.triggers,
    notes: c.notes ?? [],
    request: jsonSchemaOf(c.request, 'input'),
    value: jsonSchemaOf(c.value, 'output'),
  };
}

/**
 * The schema of an event's `data`: a platform event's declaration, or for a capability's event what the runner puts
 * there — the value (with the declaration's `extra`) on success, `failureData` on failure, either for a `run` event.
 */
export function eventDataSchema(type: string, capability?: string | null): z.ZodType | undefined {
  if (isPlatformEventType(type)) return platformEvents[type].data;
  const c = capability ? byName.get(capability) : capabilities.find((x) => x.events.some((e) => e.type === type));
  const decl = c?.events.find((e) => e.type === type);
  return c && decl ? capabilityEventData(c, decl) : undefined;
}
const capabilityEventData = (c: Capability, decl: EventDecl): z.ZodType => {
  // Secrets never enter an event (contract secret.ts): its data is the value without them.
  const value = decl.extra ? z.intersection(publicSchema(c.value), decl.extra) : publicSchema(c.value);
  return decl.when === 'failure' ? failureData : decl.when === 'run' ? z.union([value, failureData]) : value;
};

/**
 * An event of a declared type written outside the capability runner (which builds its own from each capability's
 * declaration): `data` parsed against `eventDataSchema`, so an undeclared type or a member of the wrong shape throws.
 */
export function declaredEvent(
  type: EventEnvelope['type'],
  envelope: Omit<EventEnvelope, 'id' | 'type' | 'data'>,
  data: Record<string, unknown>,
): Omit<EventEnvelope, 'id'> {
  const schema = eventDataSchema(type, envelope.capability);
  if (!schema)
    throw new Error(
      `event ${type} is not declared: declare it in a capability's events or in platformEvents (contract events.ts)`,
    );
  return { type, ...envelope, data: schema.parse(data) as Record<string, unknown> };
}

/**
 * Every event type, declared once: who emits it, when, and its `data` as JSON Schema (catalog `events`,
 * docs/events.md).
 */
export function describeEvents() {
  const types = new Map<
    string,
    {
      type: string;
      emittedBy: { capability: string; when: string }[];
      producer: string | null;
      summary: string | null;
      data: Record<string, unknown>;
    }
  >();
  for (const c of capabilities) {
    for (const e of c.events) {
      let row = types.get(e.type);
      if (!row)
        types.set(
          e.type,
          (row = {
            type: e.type,
            emittedBy: [],
            producer: null,
            summary: null,
            data: jsonSchemaOf(eventDataSchema(e.type, c.name)!),
          }),
        );
      row.emittedBy.push({ capability: c.name, when: e.when });
    }
  }
  for (const [type, p] of Object.entries(platformEvents)) {
    const row = types.get(type);
    if (row) Object.assign(row, { producer: p.producer, summary: p.summary });
    else types.set(type, { type, emittedBy: [], producer: p.producer, summary: p.summary, data: jsonSchemaOf(p.data) });
  }
  return [...types.values()].sort((a, b) => a.type.localeCompare(b.type));
}

/** An object (not an array, not null): its members read by name. */
const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object';

/** Canonical JSON: keys sorted at every depth, so the digest does not depend on declaration order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isRecord(v)) {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

let catalogMemo: ReturnType<typeof describeCatalogOnce> | undefined;
/**
 * The catalog as plain JSON; made once (about 150 ms), as the catalog never changes while the process runs: callers
 * copy, never mutate.
 */
export function describeCatalog() {
  catalogMemo ??= describeCatalogOnce();
  return catalogMemo;
}
function describeCatalogOnce() {
  return {
    nouns: nouns.map((n) => ({
      noun: n.noun,
      pillar: n.pillar,
      displayPillar: n.displayPillar,
      entity: n.entity,
      door: n.door,
      summary: n.summary,
      facets: n.facets,
      capabilityCount: Object.keys(n.capabilities).length,
      published: true,
      capabilities: (Object.values(n.capabilities) as Capability[]).map(describeCapability),
    })),
    namedNouns,
    events: describeEvents(),
  };
}

let digestMemo: string | undefined;
/** sha256 of the canonical catalog: the SDK, CLI and suite pin to it. */
export function catalogDigest(): string {
  digestMemo ??= 'sha256:' + sha256Hex(canonicalJson(describeCatalog()));
  return digestMemo;
}
