import {
  callLine,
  catalogAddress,
  describeCatalog,
  namedNouns,
  nouns,
  type Capability,
  type Noun,
} from '@vcs/contract';
import type { Doc, Section } from './doc.ts';
import { publishedMode } from './modes.ts';
import { suite } from './suite.ts';

const capsOf = (n: Noun<any>) => Object.values(n.capabilities) as Capability[];

/** describeCatalog() with each capability's published mode and its addresses. */
export function catalogJson() {
  const d = describeCatalog();
  return {
    ...d,
    suiteDigest: suite().digest,
    nouns: d.nouns.map((n) => ({
      ...n,
      links: { catalog: `/catalog/${n.noun}`, landing: `/${n.door}`, lens: `/${n.door}/{vin}` },
      capabilities: n.capabilities.map((c) => {
        const mode = publishedMode(
          capsOf(nouns.find((x) => x.noun === n.noun) as Noun<any>).find((x) => x.name === c.name)!,
        );
        return {
          ...c,
          declaredMode: c.mode,
          mode,
          catalog: catalogAddress(c),
          ...(mode === 'live' ? { page: `/catalog/${n.noun}.${c.verb}` } : {}),
        };
      }),
    })),
    namedNouns: d.namedNouns.map((n) => ({ ...n, operations: 'operations not published yet' })),
  };
}

export function catalogDoc(): Doc {
  return {
    title: 'Vehicle Capability Service — catalog',
    summary:
      'Every noun of the catalog, its capabilities and where to call them. ' +
      'Each capability answers one typed Answer: OK, EMPTY, BLOCKED or OFFER.',
    links: [
      { label: 'Markdown', href: '/catalog.md' },
      { label: 'Pricing', href: '/pricing' },
      { label: 'Acceptance suite', href: '/suite.json' },
      { label: 'API reference (live operations)', href: '/docs' },
      { label: 'OpenAPI (live operations)', href: '/openapi.json' },
      { label: 'Agent front door', href: '/llms.txt' },
    ],
    sections: [
      {
        heading: 'Published nouns',
        links: nouns.map((n) => {
          const caps = capsOf(n as Noun<any>);
          const live = caps.filter((c) => publishedMode(c) === 'live').length;
          return {
            label: n.noun,
            href: `/catalog/${n.noun}`,
            note:
              `${n.displayPillar}, ${caps.length} capabilities (${live} live, ${caps.length - live} sandbox). ` +
              n.summary,
          };
        }),
      },
      {
        heading: 'Named nouns',
        text: ['These nouns are named in the catalog; their operations are not published yet.'],
        facts: namedNouns.map((n) => [
          n.noun,
          `${n.displayPillar}, ${n.capabilityCount} capabilities — operations not published yet`,
        ]),
      },
    ],
  };
}

export function capabilitySection(c: Capability): Section {
  const mode = publishedMode(c);
  return {
    heading: c.name,
    id: c.verb,
    text: [
      c.summary,
      ...(c.notes ?? []),
      callLine(c),
      ...(c.events.length ? [`Events: ${c.events.map((e) => e.type).join(', ')}.`] : []),
      ...(c.human
        ? [
            `Human terminus: ${c.human.verb} at ${c.human.terminus.name} ` +
              `(${c.human.terminus.staffed}, ${c.human.terminus.price}).`,
          ]
        : []),
      ...(mode === 'live' ? [`Live: its own page is /catalog/${c.noun}.${c.verb}.`] : []),
    ],
  };
}

/** Sandbox triggers of every capability: their own page, linked from /llms.txt (an agent rarely needs all of them). */
export function triggersDoc(): Doc {
  return {
    title: 'Sandbox triggers',
    summary:
      'Force an outcome in the sandbox with the header `Sandbox-Trigger: <name>`. ' +
      'Sandbox answers are deterministic: same capability, input and trigger, same payload. ' +
      'A trigger the capability does not list, or any trigger with a live key, answers 400 trigger-not-honoured ' +
      'naming the ones it honours; nothing runs.',
    links: [
      { label: 'Agent front door', href: '/llms.txt' },
      { label: 'Catalog', href: '/catalog' },
    ],
    sections: nouns.map((n) => ({
      heading: n.noun,
      text: capsOf(n as Noun<any>).map(
        (c) => `${c.name} (${c.method} ${c.path}): ${c.triggers.map((t) => `\`${t.name}\` → ${t.forces}`).join(', ')}`,
      ),
    })),
  };
}

export function nounDoc(n: Noun<any>): Doc {
  return {
    title: `${n.noun} — catalog`,
    // POST /keys is said, not linked: a link is a GET.
    summary: `${n.summary} A call that needs a key takes one minted by POST /keys (no body, no signup).`,
    links: [
      { label: 'Catalog', href: '/catalog' },
      { label: 'Sandbox triggers', href: '/catalog/triggers.md' },
    ],
    sections: capsOf(n).map(capabilitySection),
  };
}

export function capabilityDoc(n: Noun<any>, c: Capability, schemas: { request: unknown; value: unknown }): Doc {
  return {
    title: `${c.name} — capability`,
    summary: c.summary,
    links: [{ label: `${n.noun} in the catalog`, href: catalogAddress(c) }],
    sections: [
      capabilitySection(c),
      { heading: 'Request schema', code: JSON.stringify(schemas.request, null, 2) },
      { heading: 'Value schema', code: JSON.stringify(schemas.value, null, 2) },
    ],
  };
}
