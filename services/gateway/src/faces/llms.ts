import { capabilities, namedNouns, nouns, type Capability } from '@vcs/contract';
import { publishedMode } from './modes.ts';

/** /llms.txt: the one-page front door for agents (H1, `>` summary, H2 sections of `- [name](url): notes`). */
export function llmsTxt(baseUrl: string): string {
  const u = (p: string) => `${baseUrl}${p}`;
  const line = (name: string, path: string, note: string) => `- [${name}](${u(path)}): ${note}`;
  const live = capabilities.filter((c) => publishedMode(c) === 'live');
  const nounLines = nouns.map((n) => {
    const caps = Object.values(n.capabilities) as Capability[];
    return line(n.noun, `/catalog/${n.noun}`, `${n.summary} ${caps.length} capabilities; door /${n.door}, VIN lens /${n.door}/{vin}.`);
  });
  const triggerLines = capabilities.map((c) => `- ${c.name} (${c.method} ${c.path}): ${c.triggers.map((t) => `\`${t.name}\` → ${t.forces}`).join(', ')}`);
  return [
    '# Vehicle Capability Service',
    '',
    `> A catalog of capabilities about vehicles, addressed by VIN (${nouns.length} nouns published, ${namedNouns.length} more named). Every capability answers one typed Answer: OK, EMPTY, BLOCKED or OFFER, with value, evidence, provenance and meter. The anonymous rung is free; the money gate is settlement, never signup.`,
    '',
    'Read the catalog first. Capabilities are addressed as `noun.verb`; GET operations take query parameters, POST operations a JSON body.',
    '',
    '## Start here',
    '',
    line('Catalog', '/catalog', 'every noun, capability, gate, price and sandbox trigger (JSON, HTML; Markdown at /catalog.md)'),
    line('Pricing', '/pricing', 'posted prices and hard ceilings'),
    line('Capability card', '/.well-known/agents.json', 'agents.json flows: mint-a-key-then-call, read-a-vin, buy'),
    line('OpenAPI', '/openapi.json', `the contract of live operations only (${live.length} live capabilities plus the platform faces)`),
    line('Acceptance suite', '/suite.json', 'digest-pinned cases a capability must pass to be live'),
    '',
    '## Keys',
    '',
    line('Mint a key', '/keys', 'POST /keys with no body: an anonymous sandbox key and account, no email or approval. Send it as `Authorization: Bearer <key>` or `X-Api-Key: <key>`.'),
    '',
    '## Gates and answers',
    '',
    line('Catalog gates', '/catalog', 'gate none: no key; key: a key is needed (401 key-required without one); offer: HTTP 402 OFFER with price, ceiling and a durable intent — settle it at POST /intents/{id}/settle and the capability executes; human: HTTP 403 BLOCKED code NEEDS_HUMAN with a handoff to a staffed terminus — poll GET /handoffs/{id}.'),
    line('Errors', '/catalog', 'every bad input is a 4xx BLOCKED answer whose `value.code` names the problem and `value.message` says what to fix; `value.problems` lists each field.'),
    '',
    '## Vehicles',
    '',
    line('Decode a VIN', '/decode/1HGCM82633A004352', 'keyless, offline: year, make, model, region, country, plant and serial are what the VIN encodes; values, trim and odometer are simulated and labelled in provenance'),
    line('VIN record', '/1HGCM82633A004352', 'every posted fact for a VIN, with links to its deal and each noun\'s lens; Accept: application/json, text/markdown or text/html'),
    '',
    '## Nouns',
    '',
    ...nounLines,
    '',
    '## Sandbox triggers',
    '',
    'Force an outcome in the sandbox with the header `Sandbox-Trigger: <name>`. Sandbox answers are deterministic: same capability, input and trigger, same payload.',
    '',
    ...triggerLines,
    '',
    '## Optional',
    '',
    line('Catalog (Markdown)', '/catalog.md', 'the same catalog as Markdown'),
    '',
  ].join('\n');
}
