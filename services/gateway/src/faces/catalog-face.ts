import { describeCatalog, namedNouns, nouns, type Capability, type Noun } from '@vcs/contract';
import type { Doc, Section } from './doc.ts';
import { publishedMode } from './modes.ts';
import { priceText } from './price-text.ts';
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
        const mode = publishedMode(capsOf(nouns.find((x) => x.noun === n.noun) as Noun<any>).find((x) => x.name === c.name)!);
        return { ...c, declaredMode: c.mode, mode, catalog: `/catalog/${n.noun}#${c.verb}`, ...(mode === 'live' ? { page: `/catalog/${n.noun}.${c.verb}` } : {}) };
      }),
    })),
    namedNouns: d.namedNouns.map((n) => ({ ...n, operations: 'operations not published yet' })),
  };
}

export function catalogDoc(): Doc {
  return {
    title: 'Vehicle Capability Service — catalog',
    summary: 'Every noun of the catalog, its capabilities and where to call them. Each capability answers one typed Answer: OK, EMPTY, BLOCKED or OFFER.',
    links: [{ label: 'Markdown', href: '/catalog.md' }, { label: 'Pricing', href: '/pricing' }, { label: 'Acceptance suite', href: '/suite.json' }, { label: 'OpenAPI (live operations)', href: '/openapi.json' }, { label: 'Agent front door', href: '/llms.txt' }],
    sections: [
      {
        heading: 'Published nouns',
        links: nouns.map((n) => {
          const caps = capsOf(n as Noun<any>);
          const live = caps.filter((c) => publishedMode(c) === 'live').length;
          return { label: n.noun, href: `/catalog/${n.noun}`, note: `${n.displayPillar}, ${caps.length} capabilities (${live} live, ${caps.length - live} sandbox). ${n.summary}` };
        }),
      },
      {
        heading: 'Named nouns',
        text: ['These nouns are named in the catalog; their operations are not published yet.'],
        facts: namedNouns.map((n) => [n.noun, `${n.displayPillar}, ${n.capabilityCount} capabilities — operations not published yet`]),
      },
    ],
  };
}

export function capabilitySection(c: Capability): Section {
  const mode = publishedMode(c);
  return {
    heading: c.name, id: c.verb,
    text: [c.summary, ...(c.notes ?? [])],
    facts: [
      ['Call', `${c.method} ${c.path}`], ['Gate', c.gate], ['Mode', mode], ['Facet', c.facet], ['Answer', c.answer],
      ['Price', priceText(c.price)], ['Events', c.events.map((e) => `${e.type} (${e.when})`).join(', ') || 'none'],
      ['Sandbox triggers (header Sandbox-Trigger)', c.triggers.map((t) => `${t.name} → ${t.forces}`).join(', ')],
      ...(c.human ? [['Human terminus', `${c.human.verb} at ${c.human.terminus.name} (${c.human.terminus.staffed}, ${c.human.terminus.price})`] as [string, string]] : []),
    ],
    links: mode === 'live' ? [{ label: 'Capability page', href: `/catalog/${c.noun}.${c.verb}` }] : [],
  };
}

export function nounDoc(n: Noun<any>): Doc {
  return {
    title: `${n.noun} — catalog`,
    summary: n.summary,
    links: [{ label: 'Catalog', href: '/catalog' }, { label: `${n.noun} door`, href: `/${n.door}` }, { label: 'Markdown', href: `/catalog/${n.noun}.md` }],
    sections: capsOf(n).map(capabilitySection),
  };
}

export function capabilityDoc(n: Noun<any>, c: Capability, schemas: { request: unknown; value: unknown }): Doc {
  return {
    title: `${c.name} — capability`,
    summary: c.summary,
    links: [{ label: `${n.noun} in the catalog`, href: `/catalog/${n.noun}#${c.verb}` }],
    sections: [capabilitySection(c), { heading: 'Request schema', code: JSON.stringify(schemas.request, null, 2) }, { heading: 'Value schema', code: JSON.stringify(schemas.value, null, 2) }],
  };
}
