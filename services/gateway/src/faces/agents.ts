import { catalogDigest } from '@vcs/contract';
import type { OpenApiDoc } from './openapi.ts';

type Flow = {
  id: string;
  title: string;
  description: string;
  actions: { id: string; sourceId: string; operationId: string }[];
  links: { origin: { actionId: string; fieldPath: string }; target: { actionId: string; fieldPath: string } }[];
  fields: Record<string, unknown>;
};

/**
 * The capability card, in the agents.json format (agentsJson 0.1.0: info, sources pointing at an OpenAPI
 * document, flows of operations chained by links). A flow is published only when every operation it names
 * is in /openapi.json, so the card never points at something the contract does not list.
 */
export function agentsDocument(baseUrl: string, openapi: OpenApiDoc) {
  const operations = Object.values(openapi.paths).flatMap((p) => Object.values(p));
  const ops = new Set(operations.map((o) => o.operationId));
  const liveKeyed = operations.find((o) => o.tags[0] !== 'platform' && !o.security);
  const candidates: Flow[] = [
    {
      id: 'mint-a-key-then-call',
      title: 'Mint a key, then call a capability',
      description:
        'POST /keys needs no body and no signup; ' +
        'send the key as Authorization: Bearer <key> (or X-Api-Key) on the call. ' +
        'Every answer is typed: OK, EMPTY, BLOCKED (the code says what to fix) ' +
        'or OFFER (402: settle at POST /intents/{id}/settle).',
      actions: [
        { id: 'mint', sourceId: 'vcs', operationId: 'keys.mint' },
        { id: 'call', sourceId: 'vcs', operationId: liveKeyed?.operationId ?? 'decode.get' },
      ],
      links: [
        {
          origin: { actionId: 'mint', fieldPath: 'responses.success.key' },
          target: { actionId: 'call', fieldPath: 'parameters.authorization' },
        },
      ],
      fields: { parameters: [], responses: { success: { type: 'object' } } },
    },
    {
      id: 'read-a-vin',
      title: 'Read everything about a VIN',
      description:
        'Decode the VIN offline, then read its record ' +
        "(every posted fact, with links to its deal and each noun's lens).",
      actions: [
        { id: 'decode', sourceId: 'vcs', operationId: 'decode.get' },
        { id: 'record', sourceId: 'vcs', operationId: 'record.get' },
      ],
      links: [
        {
          origin: { actionId: 'decode', fieldPath: 'responses.success.decode.vin' },
          target: { actionId: 'record', fieldPath: 'parameters.vin' },
        },
      ],
      fields: { parameters: [{ name: 'vin', in: 'path', required: true }], responses: { success: { type: 'object' } } },
    },
    {
      id: 'buy',
      title: 'The buy workflow',
      description:
        'Mint a key, open a buy deal for a VIN (state OPENED, with its checklist), ' +
        'then follow the deal step by step until SETTLED; ' +
        'human steps arrive as 403 NEEDS_HUMAN handoffs to poll, priced steps as 402 OFFERs to settle.',
      actions: [
        { id: 'mint', sourceId: 'vcs', operationId: 'keys.mint' },
        { id: 'open', sourceId: 'vcs', operationId: 'deals.create' },
        { id: 'follow', sourceId: 'vcs', operationId: 'deals.get' },
      ],
      links: [
        {
          origin: { actionId: 'mint', fieldPath: 'responses.success.key' },
          target: { actionId: 'open', fieldPath: 'parameters.authorization' },
        },
        {
          origin: { actionId: 'open', fieldPath: 'responses.success.dealId' },
          target: { actionId: 'follow', fieldPath: 'parameters.id' },
        },
      ],
      fields: {
        parameters: [
          { name: 'vin', in: 'body', required: true },
          { name: 'buyer', in: 'body', required: true },
        ],
        responses: { success: { type: 'object' } },
      },
    },
  ];
  return {
    agentsJson: '0.1.0',
    info: {
      title: 'Vehicle Capability Service',
      version: catalogDigest().slice(7, 19),
      description:
        `A catalog of capabilities about vehicles, addressed by VIN. ` +
        `First read: ${baseUrl}/catalog (every noun, capability, gate, price and sandbox trigger). ` +
        `Then ${baseUrl}/llms.txt for the rules of the road.`,
    },
    firstRead: `${baseUrl}/catalog`,
    sources: [{ id: 'vcs', path: `${baseUrl}/openapi.json` }],
    overrides: [],
    flows: candidates.filter((f) => f.actions.every((a) => ops.has(a.operationId))),
    links: {
      catalog: `${baseUrl}/catalog`,
      pricing: `${baseUrl}/pricing`,
      suite: `${baseUrl}/suite.json`,
      llms: `${baseUrl}/llms.txt`,
      openapi: `${baseUrl}/openapi.json`,
    },
  };
}
