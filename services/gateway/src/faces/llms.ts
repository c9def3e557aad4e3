import { capabilities, nouns, priceShort, type Capability, type Noun } from '@vcs/contract';
import { nounDoc, triggersDoc } from './catalog-face.ts';
import { toMarkdown } from './doc.ts';

/**
 * A capability's gate and price in the fewest characters: `free`, the price alone for an offer (its 402 asks it),
 * the gate (`key`, `human`) before any price otherwise.
 */
function terms(c: Capability): string {
  const price = priceShort(c.price);
  if (c.gate === 'none' || c.gate === 'offer') return price;
  return c.price.model === 'free' ? c.gate : `${c.gate}, ${price}`;
}

/** The currencies of the catalog's prices, which the one-line prices leave out. */
const currencies = () =>
  [...new Set(capabilities.flatMap((c) => (c.price.model === 'free' ? [] : [c.price.currency])))].join(', ');

/**
 * /llms.txt, which `GET /` also answers to an agent: the front door, in the llms.txt format (H1, `>` summary, H2
 * sections of `- [name](url): notes`) and kept small, since an agent's context is its budget. It says how to pay
 * with a wallet and no key (x402, over HTTP and MCP) and how to call with a key, and lists every capability in one
 * line (method, route, gate and price) under its noun, whose page (`/catalog/<noun>.md`) gives inputs and answers.
 * Links are relative to the service. The whole catalog is for programs (`/catalog`, `/openapi.json`); people read
 * `/docs`.
 */
export function llmsTxt(): string {
  return [
    '# Vehicle Capability Service',
    '',
    '> Vehicle capabilities by VIN: one HTTP route each, one JSON envelope an answer. ' +
      'Money moves only when an answer is settled. Sandbox data is simulated.',
    '',
    '## Pay with a wallet (x402)',
    '',
    'Call the route; its 402 carries `PAYMENT-REQUIRED`. Send the request again with `PAYMENT-SIGNATURE`, ' +
      'as a stock x402 client does. MCP: `POST /mcp`, the payment in `params._meta["x402/payment"]`.',
    '',
    '## Or with a key',
    '',
    '[Mint a key](/keys): `POST /keys`, no body; send `Authorization: Bearer <key>`. ' +
      'A 402 OFFER is paid with it at `value.settle`.',
    '',
    '## Capabilities',
    '',
    `Method, route, then \`free\`, the price its 402 asks (${currencies()}), or the gate and any price. ` +
      "GET takes a query, POST a JSON body; a noun's page has inputs and answers.",
    ...nouns.flatMap((n) => [
      `### [${n.noun}](/catalog/${n.noun}.md)`,
      ...(Object.values(n.capabilities) as Capability[]).map((c) => `- ${c.method} ${c.path} ${terms(c)}`),
    ]),
    '',
    '## More',
    '',
    '[API reference](/docs), [OpenAPI](/openapi.json), [catalog](/catalog), [sandbox triggers](/catalog/triggers.md)',
    '',
  ].join('\n');
}

/** /llms-full.txt: the front door, every noun page and the trigger table, for an agent that wants it all. */
export function llmsFullTxt(): string {
  return [llmsTxt(), ...nouns.map((n) => toMarkdown(nounDoc(n as Noun<any>))), toMarkdown(triggersDoc())].join('\n');
}
