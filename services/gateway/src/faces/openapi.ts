import { anyAnswer, answerSchema, blockedValue, capabilities, catalogDigest, decodeRecord, jsonSchemaOf, type Capability } from '@vcs/contract';
import { z } from 'zod';
import { publishedMode } from './modes.ts';

/** Routes of the platform itself (not catalog capabilities); each is listed only if this gateway serves it. */
export interface Face { operationId: string; method: 'GET' | 'POST'; path: string; summary: string; params?: string[]; auth?: boolean; response: Record<string, unknown> }

const obj = { type: 'object', additionalProperties: true };
export const platformFaces: Face[] = [
  { operationId: 'keys.mint', method: 'POST', path: '/keys', summary: 'Mint an anonymous sandbox key and its account (no body).', response: { type: 'object', required: ['type', 'key', 'account', 'environment', 'links'], properties: { type: { const: 'OK' }, key: { type: 'string' }, account: { type: 'string' }, environment: { type: 'string' }, links: obj } } },
  { operationId: 'decode.get', method: 'GET', path: '/decode/{vin}', params: ['vin'], summary: 'Decode a VIN offline (keyless).', response: { type: 'object', properties: { type: { const: 'OK' }, decode: strip(jsonSchemaOf(decodeRecord)), provenance: obj } } },
  { operationId: 'record.get', method: 'GET', path: '/{vin}', params: ['vin'], summary: 'The VIN record: every posted fact, by Accept as JSON, Markdown or HTML (keyless).', response: obj },
  { operationId: 'deals.create', method: 'POST', path: '/buy/deals', auth: true, summary: 'Open a buy deal for a VIN: its id, state OPENED and checklist.', response: obj },
  { operationId: 'deals.get', method: 'GET', path: '/buy/deals/{id}', params: ['id'], auth: true, summary: 'A deal, its state and checklist.', response: obj },
  { operationId: 'intents.settle', method: 'POST', path: '/intents/{id}/settle', params: ['id'], auth: true, summary: 'Settle the intent of a 402 OFFER; the capability then executes.', response: obj },
  { operationId: 'handoffs.get', method: 'GET', path: '/handoffs/{id}', params: ['id'], summary: 'Poll a NEEDS_HUMAN handoff.', response: obj },
];

/** Nested JSON Schemas must not repeat the dialect; the document declares it once. */
function strip(s: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = s;
  return rest;
}
const toOasPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');
const blockedEnvelope = strip(jsonSchemaOf(answerSchema(z.never()).options[2]));

function capabilityOperation(c: Capability) {
  const request = strip(jsonSchemaOf(c.request, 'input')) as { properties?: Record<string, any>; required?: string[] };
  const op: Record<string, unknown> = {
    operationId: c.name, summary: c.summary, tags: [c.noun],
    'x-vcs-gate': c.gate, 'x-vcs-mode': 'live', 'x-vcs-answer': c.answer, 'x-vcs-price': c.price,
    ...(c.gate === 'none' ? { security: [] } : {}),
    responses: {
      '200': { description: `${c.answer}: an OK or EMPTY answer`, content: { 'application/json': { schema: strip(jsonSchemaOf(answerSchema(c.value))) } } },
      ...(c.gate === 'offer' ? { '402': { description: 'OFFER: price, ceiling and a durable intent to settle', content: { 'application/json': { schema: strip(jsonSchemaOf(anyAnswer)) } } } } : {}),
      '4XX': { description: 'BLOCKED: the code says what to fix', content: { 'application/json': { schema: blockedEnvelope } } },
    },
  };
  if (c.method === 'GET') {
    op.parameters = Object.entries(request.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: (request.required ?? []).includes(name), schema, ...(schema.description ? { description: schema.description } : {}) }));
  } else {
    op.requestBody = { required: false, content: { 'application/json': { schema: request } } };
  }
  return op;
}

function faceOperation(f: Face) {
  return {
    operationId: f.operationId, summary: f.summary, tags: ['platform'],
    ...(f.auth ? {} : { security: [] }),
    parameters: (f.params ?? []).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: f.response } } },
      '4XX': { description: 'BLOCKED: the code says what to fix', content: { 'application/json': { schema: blockedEnvelope } } },
    },
  };
}

/** OpenAPI 3.1 of the live operations (published mode live) and the platform faces this gateway serves. */
export function openapiDocument(baseUrl: string, served: (method: string, path: string) => boolean) {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (method: string, path: string, op: unknown) => { (paths[path] ??= {})[method.toLowerCase()] = op; };
  const faces = platformFaces.filter((f) => served(f.method, f.path.replace(/\{(\w+)\}/g, ':$1')));
  for (const f of faces) add(f.method, f.path, faceOperation(f));
  for (const c of capabilities.filter((x) => publishedMode(x) === 'live')) add(c.method, toOasPath(c.path), capabilityOperation(c));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Vehicle Capability Service', version: catalogDigest().slice(7, 19),
      description: 'Live operations only (a capability is live when its acceptance suite at /suite.json passes). The whole catalog, sandbox included, is at /catalog; read it first.',
      'x-catalog-digest': catalogDigest(),
    },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }, { apiKey: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A key from POST /keys' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'The same key, as a header' },
      },
      schemas: { Blocked: strip(jsonSchemaOf(blockedValue)) },
    },
    paths,
  };
}
export type OpenApiDoc = ReturnType<typeof openapiDocument>;
