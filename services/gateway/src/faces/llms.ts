import { capabilities, namedNouns, nouns, type Noun } from '@vcs/contract';
import { nounDoc, triggersDoc } from './catalog-face.ts';
import { toMarkdown } from './doc.ts';

/**
 * /llms.txt: the agent's front door (H1, `>` summary, H2 sections of `- [name](url): notes`), kept small: an
 * agent's context is its budget. It says how to mint, the gates and answer kinds, how to pay with a wallet and no
 * key (x402, over HTTP and MCP), and sends the agent to the one noun page it needs (`/catalog/<noun>.md`, a line per
 * capability), not to the whole catalog, which is for programs.
 */
export function llmsTxt(baseUrl: string): string {
  const u = (p: string) => `${baseUrl}${p}`;
  const line = (name: string, path: string, note: string) => `- [${name}](${u(path)}): ${note}`;
  return [
    '# Vehicle Capability Service',
    '',
    `> Vehicle capabilities by VIN: ${nouns.length} nouns, ${capabilities.length} capabilities, ` +
      'each `noun.verb` at one HTTP route. Every answer is one JSON envelope ' +
      '`{type, answers, value, evidence, provenance, meter}`, `type` OK, EMPTY, BLOCKED or OFFER. ' +
      'Anonymous use is free; money is taken at settlement (HTTP 402), never at signup. ' +
      'The sandbox answers simulated data, labelled in `provenance`.',
    '',
    '## Call it',
    '',
    line(
      'Mint a key: POST /keys',
      '/keys',
      '`POST /keys` (not GET), no body: `{"key": "vcs_…"}`. Send it as `Authorization: Bearer <key>`.',
    ),
    '- Open the page of the noun you need (below): a line per capability with method, path, gate, inputs, ' +
      'answer and price. GET takes query parameters, POST a JSON body.',
    '- Gates: `none` free. `key` needs a key. `offer` answers 402 OFFER: ' +
      'send `value.settle` `{method, path}` with your key to pay and get the answer ' +
      '(or add `Accept-Price: <amount> USD` to settle at once). ' +
      '`human` answers 403 NEEDS_HUMAN: poll `GET /handoffs/{id}`.',
    '- Pay without a key (x402): the 402 carries `PAYMENT-REQUIRED` (base64 JSON, x402 v2); sign `accepts[0]` ' +
      'with your wallet and send the same request again with `PAYMENT-SIGNATURE: <base64 JSON payload>`; ' +
      'the 200 is the answer, its receipt in `PAYMENT-RESPONSE`. ' +
      'Over MCP, an `exec` that returns an OFFER is a payment-required result: ' +
      'call it again with the payload in `params._meta["x402/payment"]`.',
    '- BLOCKED: `value.code`, `value.message` (what to fix), `value.problems` by field.',
    '',
    '## Nouns',
    '',
    // A noun's summary up to its first colon: enough to pick the page, which says the rest.
    ...nouns.map((n) => line(n.noun, `/catalog/${n.noun}.md`, n.summary.split(':')[0]!)),
    '',
    '## More',
    '',
    line('Sandbox triggers', '/catalog/triggers.md', 'force EMPTY, BLOCKED or a declined payment: `Sandbox-Trigger`'),
    line('Decode a VIN', '/decode/1HGCM82633A004352', 'keyless'),
    line('VIN record', '/1HGCM82633A004352', 'every posted fact for a VIN'),
    line('Pricing', '/pricing', 'prices and hard ceilings'),
    line('MCP', '/mcp', 'POST, Streamable HTTP, MCP 2025-11-25 or 2026-07-28: tools `search`, `fetch`, `exec`'),
    line('Everything at once', '/llms-full.txt', 'this page, every noun page and the triggers'),
    line(
      'For programs',
      '/catalog',
      `the catalog as JSON (large; ${namedNouns.length} more nouns named), /openapi.json, /.well-known/agents.json`,
    ),
    '',
  ].join('\n');
}

/** /llms-full.txt: the front door, every noun page and the trigger table, for an agent that wants it all. */
export function llmsFullTxt(baseUrl: string): string {
  return [llmsTxt(baseUrl), ...nouns.map((n) => toMarkdown(nounDoc(n as Noun<any>))), toMarkdown(triggersDoc())].join(
    '\n',
  );
}
