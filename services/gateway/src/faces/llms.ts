import { capabilities, namedNouns, nouns, type Noun } from '@vcs/contract';
import { nounDoc, triggersDoc } from './catalog-face.ts';
import { toMarkdown } from './doc.ts';

/**
 * /llms.txt: the agent's front door (H1, `>` summary, H2 sections of `- [name](url): notes`), kept small: an
 * agent's context is its budget. It says how to mint, the gates and answer kinds, and sends the agent to the one
 * noun page it needs (`/catalog/<noun>.md`, a line per capability), not to the whole catalog, which is for programs.
 */
export function llmsTxt(baseUrl: string): string {
  const u = (p: string) => `${baseUrl}${p}`;
  const line = (name: string, path: string, note: string) => `- [${name}](${u(path)}): ${note}`;
  return [
    '# Vehicle Capability Service',
    '',
    `> Capabilities about vehicles, addressed by VIN: ${nouns.length} nouns, ${capabilities.length} capabilities, ` +
      'each `noun.verb` at one HTTP route. ' +
      'Every answer is one JSON envelope `{type, answers, value, evidence, provenance, meter}` ' +
      'whose `type` is OK, EMPTY, BLOCKED or OFFER. ' +
      'Anonymous use is free; money is taken at settlement (HTTP 402), never at signup. ' +
      'The sandbox answers deterministic simulated data, labelled in `provenance`.',
    '',
    '## Call it',
    '',
    line(
      'Mint a key: POST /keys',
      '/keys',
      'send `POST /keys` (not GET) with no body: `{"key": "vcs_…"}`, no signup. ' +
        'Send it as `Authorization: Bearer <key>`.',
    ),
    '- Find the capability: open the page of the noun you need (below): ' +
      'one line each with method, path, gate, inputs and answer. GET takes query parameters, POST a JSON body.',
    '- Gates: `none` is free, no key. `key` needs a key (401 `key-required` without). ' +
      '`offer` answers 402 OFFER with `value.price`, `value.ceiling` and `value.settle` `{method, path}`: ' +
      'send that request with your key to pay and get the answer ' +
      '(or add `Accept-Price: <amount> USD` to the call to settle at once). ' +
      '`human` answers 403 NEEDS_HUMAN with a handoff to poll at `GET /handoffs/{id}`.',
    '- A BLOCKED answer has `value.code`, a `value.message` that says what to fix, and `value.problems` by field.',
    '',
    '## Nouns',
    '',
    ...nouns.map((n) => line(n.noun, `/catalog/${n.noun}.md`, `${n.summary} (${Object.keys(n.capabilities).length})`)),
    '',
    '## More',
    '',
    line(
      'Sandbox triggers',
      '/catalog/triggers.md',
      'force EMPTY, BLOCKED, a declined payment or an expired offer with the header `Sandbox-Trigger: <name>`',
    ),
    line('Decode a VIN', '/decode/1HGCM82633A004352', 'keyless'),
    line('VIN record', '/1HGCM82633A004352', 'every posted fact for a VIN (JSON, Markdown or HTML)'),
    line('Pricing', '/pricing', 'posted prices and hard ceilings'),
    line('MCP', '/mcp', 'POST, Streamable HTTP: tools `search`, `fetch`, `exec`'),
    line('Everything at once', '/llms-full.txt', 'this page, every noun page and the triggers in one file'),
    line(
      'For programs',
      '/catalog',
      'the whole catalog as JSON (large), /openapi.json, /.well-known/agents.json, /suite.json; ' +
        `${namedNouns.length} more nouns are named there`,
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
