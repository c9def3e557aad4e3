import {
  anyAnswer,
  answerSchema,
  blockedValue,
  capabilities,
  catalogDigest,
  codesOf,
  decodeRecord,
  statusOfCode,
  jsonSchemaOf,
  opList,
  ops,
  setByGatewayMembers,
  vin,
  type Capability,
  type Op,
} from '@vcs/contract';
import { z } from 'zod';
import { publishedMode } from './modes.ts';

/**
 * The two keyless faces that are not bus operations: the gateway answers them itself (decode through the data
 * pillar).
 */
interface Face {
  operationId: string;
  method: 'GET';
  path: string;
  summary: string;
  params: string[];
  response: Record<string, unknown>;
}
const obj = { type: 'object', additionalProperties: true };
const faces: Face[] = [
  {
    operationId: 'decode.get',
    method: 'GET',
    path: '/decode/{vin}',
    params: ['vin'],
    summary: 'Decode a VIN offline (keyless).',
    response: {
      type: 'object',
      properties: { type: { const: 'OK' }, decode: strip(jsonSchemaOf(decodeRecord)), provenance: obj },
    },
  },
  {
    operationId: 'record.get',
    method: 'GET',
    path: '/{vin}',
    params: ['vin'],
    summary: 'The VIN record: every posted fact, by Accept as JSON, Markdown or HTML (keyless).',
    response: obj,
  },
];

/** Nested JSON Schemas must not repeat the dialect; the document declares it once. */
function strip(s: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = s;
  return rest;
}
const toOasPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');
/**
 * A VIN as a path segment: the body's rule (contract vin.ts) less its length cap, which a path does not have (a
 * padded segment is trimmed whatever its length).
 */
const { maxLength: _bodyOnly, ...vinInPath } = strip(jsonSchemaOf(vin, 'input'));
const blockedEnvelope = strip(jsonSchemaOf(answerSchema(z.never()).options[2]));

/** x402 on the wire (docs/money.md): the payment a client sends, and what the 402 and the paid answer carry. */
const b64 = { type: 'string', contentEncoding: 'base64' };
const x402Parameters = [
  {
    name: 'PAYMENT-SIGNATURE',
    in: 'header',
    required: false,
    schema: b64,
    description:
      'x402 v2: the signed payment for this offer (base64 JSON PaymentPayload); answered with PAYMENT-RESPONSE',
  },
  {
    name: 'X-PAYMENT',
    in: 'header',
    required: false,
    schema: b64,
    description: 'x402 v1: the signed payment (base64 JSON); answered with X-PAYMENT-RESPONSE',
  },
  {
    name: 'SIGN-IN-WITH-X',
    in: 'header',
    required: false,
    schema: b64,
    description:
      "x402 sign-in-with-x: the paying wallet's proof for the 402's challenge (no key, no payment); answers the " +
      'stored answer that wallet paid for with this input, or the 402 again with the reason in `error`',
  },
];
/**
 * `Sandbox-Trigger`, from the catalog: the triggers a capability honours (null: the settle route, where its intent's
 * capability decides), and what any other answers.
 */
function triggerParameter(c: Capability | null) {
  const refused =
    'Any other value, or any value with a live key, answers 400 trigger-not-honoured naming the triggers that are ' +
    'honoured; nothing runs and nothing is paid';
  return {
    name: 'Sandbox-Trigger',
    in: 'header',
    required: false,
    schema: c ? { type: 'string', enum: c.triggers.map((t) => t.name) } : { type: 'string' },
    description: c
      ? `Force an outcome in the sandbox: ${c.triggers.map((t) => `${t.name} (${t.forces})`).join(', ')}. ${refused}`
      : `Force an outcome in the sandbox: a trigger the intent's capability honours (its catalog entry; ` +
        `GET /catalog/triggers). ${refused}`,
  };
}

const paymentRequiredHeader = {
  'PAYMENT-REQUIRED': {
    schema: b64,
    description:
      'x402 v2 PaymentRequired: the offer to pay (with `error` when a payment or a sign-in-with-x proof was ' +
      'refused), and its extensions: bazaar (the input and output, for indexers), offer-receipt (signed offers), ' +
      'payment-identifier (optional) and sign-in-with-x (a challenge)',
  },
};
const paymentResponseHeaders = {
  'PAYMENT-RESPONSE': {
    schema: b64,
    description:
      'x402 v2 settlement receipt (success, transaction, network, payer), when a payment paid for this answer',
  },
  'X-PAYMENT-RESPONSE': { schema: b64, description: 'The same for an x402 v1 payment' },
};
const pendingResponse = {
  description:
    'BLOCKED execution-pending, payment-pending or payment-unavailable: ' +
    'the outcome is not known yet (never a 402); ask again after Retry-After',
  headers: { 'Retry-After': { schema: { type: 'integer' } } },
  content: { 'application/json': { schema: blockedEnvelope } },
};

/** An operation of the document: what every one carries (the agents card reads these), and the rest of OpenAPI's. */
export interface OasOperation {
  operationId: string;
  tags: string[];
  security?: object[];
  [member: string]: unknown;
}

function capabilityOperation(c: Capability) {
  const request = strip(jsonSchemaOf(c.request, 'input')) as { properties?: Record<string, any>; required?: string[] };
  const op: OasOperation = {
    operationId: c.name,
    summary: c.summary,
    tags: [c.noun],
    'x-vcs-gate': c.gate,
    'x-vcs-mode': 'live',
    'x-vcs-answer': c.answer,
    'x-vcs-price': c.price,
    ...(c.gate === 'none' ? { security: [] } : {}),
    responses: {
      '200': {
        description: `${c.answer}: an OK or EMPTY answer`,
        ...(c.gate === 'offer' ? { headers: paymentResponseHeaders } : {}),
        content: { 'application/json': { schema: strip(jsonSchemaOf(answerSchema(c.value))) } },
      },
      ...(c.gate === 'offer'
        ? {
            '402': {
              description:
                'OFFER: price, ceiling and a durable intent to settle (pay it with x402: PAYMENT-SIGNATURE), ' +
                'or a refused payment',
              headers: paymentRequiredHeader,
              content: { 'application/json': { schema: strip(jsonSchemaOf(anyAnswer)) } },
            },
            '503': pendingResponse,
          }
        : {}),
      '4XX': {
        description: 'BLOCKED: the code says what to fix (trigger-not-honoured: a Sandbox-Trigger it does not honour)',
        content: { 'application/json': { schema: blockedEnvelope } },
      },
    },
  };
  op.parameters = [triggerParameter(c), ...(c.gate === 'offer' ? x402Parameters : [])];
  if (c.method === 'GET') {
    op.parameters = [
      ...(op.parameters as unknown[]),
      ...Object.entries(request.properties ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: (request.required ?? []).includes(name),
        schema,
        ...(schema.description ? { description: schema.description } : {}),
      })),
    ];
  } else {
    op.requestBody = { required: false, content: { 'application/json': { schema: request } } };
  }
  return op;
}

const blockedResponse = {
  description: 'BLOCKED: the code says what to fix',
  content: { 'application/json': { schema: blockedEnvelope } },
};

function faceOperation(f: Face) {
  return {
    operationId: f.operationId,
    summary: f.summary,
    tags: ['platform'],
    security: [],
    parameters: f.params.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: name === 'vin' ? vinInPath : { type: 'string' },
    })),
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: f.response } } },
      '4XX': blockedResponse,
    },
  };
}

/** A minted key's answer (POST /keys adds its links to commerce's answer). */
const mintedKey = {
  type: 'object',
  required: ['type', 'key', 'account', 'environment', 'links'],
  properties: {
    type: { const: 'OK' },
    key: { type: 'string' },
    account: { type: 'string' },
    environment: { type: 'string' },
    links: obj,
  },
};

/**
 * An operation's declared reply by HTTP status: its OK (and EMPTY) answers are the 200, an OFFER the 402, a
 * NEEDS_HUMAN the 403.
 */
function repliesOf(o: Op): Record<string, unknown> {
  if (o === ops.keysMint)
    return {
      '200': { description: `${o.route!.answers}: OK`, content: { 'application/json': { schema: mintedKey } } },
    };
  const schema = strip(jsonSchemaOf(o.reply)) as { anyOf?: { properties?: { type?: { const?: string } } }[] };
  const kinds = schema.anyOf ?? [schema as { properties?: { type?: { const?: string } } }];
  const statusOf = (k: string | undefined) => (k === 'OFFER' ? '402' : k === 'BLOCKED' ? '403' : '200');
  const out: Record<
    string,
    { description: string; content: { 'application/json': { schema: { anyOf: unknown[] } } } }
  > = {};
  for (const k of kinds) {
    const status = statusOf(k.properties?.type?.const);
    (out[status] ??= {
      description:
        status === '200'
          ? `${o.route!.answers}: OK`
          : status === '402'
            ? 'OFFER: a step to pay for'
            : 'BLOCKED NEEDS_HUMAN: a step for a human',
      content: { 'application/json': { schema: { anyOf: [] } } },
    }).content['application/json'].schema.anyOf.push(k);
  }
  for (const r of Object.values(out)) {
    const s = r.content['application/json'].schema;
    if (s.anyOf.length === 1) r.content['application/json'].schema = s.anyOf[0] as never;
  }
  return out;
}

/**
 * A platform operation's entry, from its declaration: path parameters and body from its input schema, less what
 * the gateway sets.
 */
function opOperation(o: Op) {
  const route = o.route!;
  const input = strip(jsonSchemaOf(o.input, 'input')) as { properties?: Record<string, any>; required?: string[] };
  const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const hidden = new Set([...inPath, ...setByGatewayMembers(o)]);
  const properties = Object.fromEntries(Object.entries(input.properties ?? {}).filter(([k]) => !hidden.has(k)));
  const required = (input.required ?? []).filter((k) => !hidden.has(k));
  return {
    operationId: o.name,
    summary: route.summary,
    tags: ['platform'],
    'x-vcs-answer': route.answers,
    // An optional key: anonymous, or either form of the key.
    ...(route.key === 'none'
      ? { security: [] }
      : route.key === 'optional'
        ? { security: [{}, { bearer: [] }, { apiKey: [] }] }
        : {}),
    parameters: [
      ...inPath.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: input.properties?.[name] ?? { type: 'string' },
      })),
      ...(o === ops.intentsSettle ? [triggerParameter(null), ...x402Parameters] : []),
    ],
    ...(route.method === 'POST' && Object.keys(properties).length
      ? {
          requestBody: {
            required: required.length > 0,
            content: { 'application/json': { schema: { ...input, properties, required } } },
          },
        }
      : {}),
    // The codes it may answer: its declared ones and the transport's (contract ops.ts).
    'x-vcs-codes': codesOf(o),
    responses: {
      ...repliesOf(o),
      ...(o === ops.intentsSettle
        ? {
            '200': { ...(repliesOf(o)['200'] as object), headers: paymentResponseHeaders },
            '402': {
              description:
                'BLOCKED: the payment was refused for good (the code says which term); ' +
                "PAYMENT-REQUIRED names x402's reason",
              headers: paymentRequiredHeader,
              content: { 'application/json': { schema: blockedEnvelope } },
            },
          }
        : {}),
      '4XX': {
        ...blockedResponse,
        description: `BLOCKED: the code says what to fix (${codesOf(o)
          .filter((c) => statusOfCode(c) < 500)
          .join(', ')}${o.passesCapabilityCodes ? ', or the code of a capability it runs' : ''})`,
      },
      '503':
        o === ops.intentsSettle || o === ops.handoffsComplete
          ? pendingResponse
          : {
              description: `BLOCKED pillar-unavailable or store-unavailable: retry shortly`,
              content: { 'application/json': { schema: blockedEnvelope } },
            },
    },
  };
}

/** OpenAPI 3.1 of the live operations (published mode live) and the platform faces this gateway serves. */
export function openapiDocument(baseUrl: string, served: (method: string, path: string) => boolean) {
  const paths: Record<string, Record<string, OasOperation>> = {};
  const add = (method: string, path: string, op: OasOperation) => {
    (paths[path] ??= {})[method.toLowerCase()] = op;
  };
  const isServed = (method: string, path: string) => served(method, path.replace(/\{(\w+)\}/g, ':$1'));
  for (const f of faces) if (isServed(f.method, f.path)) add(f.method, f.path, faceOperation(f));
  for (const o of opList)
    if (o.route && isServed(o.route.method, o.route.path)) add(o.route.method, o.route.path, opOperation(o));
  for (const c of capabilities.filter((x) => publishedMode(x) === 'live'))
    add(c.method, toOasPath(c.path), capabilityOperation(c));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Vehicle Capability Service',
      version: catalogDigest().slice(7, 19),
      description:
        'Live operations only (a capability is live when its acceptance suite at /suite.json passes). ' +
        'The whole catalog, sandbox included, is at /catalog; read it first.',
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
