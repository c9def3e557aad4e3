import { priceText, catalogAddress, type Capability, type Noun } from '@vcs/contract';
import type { Doc } from './doc.ts';
import { lensSections, type Lens } from './record.ts';

/** A noun's landing: what it does, its capabilities and prices, and where to go next. */
export function landingFace(n: Noun<any>, modeOf: (c: Capability) => string): { json: unknown; doc: Doc } {
  const caps = Object.values(n.capabilities) as Capability[];
  const json = {
    noun: n.noun,
    door: n.door,
    pillar: n.displayPillar,
    entity: n.entity,
    summary: n.summary,
    capabilities: caps.map((c) => ({
      name: c.name,
      method: c.method,
      path: c.path,
      gate: c.gate,
      mode: modeOf(c),
      facet: c.facet,
      price: c.price,
      summary: c.summary,
      catalog: catalogAddress(c),
    })),
    links: { lens: `/${n.door}/{vin}`, catalog: `/catalog/${n.noun}`, pricing: '/pricing' },
  };
  const doc: Doc = {
    title: `${n.noun} — ${n.entity}`,
    summary: n.summary,
    links: [
      { label: `${n.noun} in the catalog`, href: `/catalog/${n.noun}` },
      { label: 'Pricing', href: '/pricing' },
    ],
    sections: [
      {
        heading: 'VIN lens',
        text: [`GET /${n.door}/{vin} shows this noun's facts for one VIN (JSON, Markdown or HTML by Accept).`],
      },
      {
        heading: 'Capabilities',
        sections: caps.map((c) => ({
          heading: c.name,
          id: c.verb,
          text: [c.summary],
          facts: [
            ['Call', `${c.method} ${c.path}`],
            ['Gate', c.gate],
            ['Mode', modeOf(c)],
            ['Price', priceText(c.price)],
          ],
          links: [{ label: 'Full description', href: catalogAddress(c) }],
        })),
      },
    ],
  };
  return { json, doc };
}

export function lensFace(n: Noun<any>, lens: Lens): { json: unknown; doc: Doc } {
  return {
    json: { type: 'OK', ...lens },
    doc: {
      title: `${n.noun} for VIN ${lens.vin}`,
      summary: `What ${n.noun} has on file for VIN ${lens.vin}.`,
      links: [
        { label: 'The whole record', href: lens.links.record },
        { label: `${n.noun} landing`, href: lens.links.landing },
        { label: `${n.noun} in the catalog`, href: lens.links.catalog },
      ],
      sections: lensSections(lens),
    },
  };
}
