import { nouns, type Capability, type Noun } from '@vcs/contract';
import { decodeThroughData } from '../decode.ts';
import type { GatewayDeps } from '../deps.ts';
import type { Doc, Section } from './doc.ts';
import { dealsFor, factsFor, type DealRow, type Fact } from './facts.ts';

export const dealLink = (id: string) => `/buy/deals/${id}`;
export const lensLink = (n: Noun<any>, vin: string) => `/${n.door}/${vin}`;
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** The decode of a VIN that is known to be valid, from the data pillar; null when the pillar does not answer. */
export async function decodeOf(deps: GatewayDeps, vin: string, requestId: string) {
  const r = await decodeThroughData(deps, vin, requestId);
  return r.ok ? { decode: r.decode, provenance: r.provenance } : null;
}

/** One noun's lens on a VIN: its facts, plus the decode for the vehicle noun and deals for the deal noun. */
export function lensData(
  n: Noun<any>,
  vin: string,
  facts: Fact[],
  deals: DealRow[],
  decode: Record<string, any> | null,
) {
  return {
    noun: n.noun,
    door: n.door,
    vin,
    lens: lensLink(n, vin),
    facts: facts.filter((f) => f.noun === n.noun),
    ...(n.noun === 'vehicle' && decode ? { decode } : {}),
    ...(n.noun === 'deal' ? { deals: deals.map((d) => ({ ...d, link: dealLink(d.id) })) } : {}),
    links: { landing: `/${n.door}`, catalog: `/catalog/${n.noun}`, record: `/${vin}` },
  };
}
export type Lens = ReturnType<typeof lensData>;

export function lensSections(l: Lens): Section[] {
  const out: Section[] = [];
  if (l.decode)
    out.push({
      heading: 'Decode',
      facts: [
        ['Year', String(l.decode.year ?? '—')],
        ['Make', l.decode.make ?? '—'],
        ['Model', l.decode.model ?? '—'],
        ['Body', l.decode.body.class ?? '—'],
        ['MSRP (simulated)', `${l.decode.msrp} USD`],
        ['Retail value (simulated)', `${l.decode.retailValue} USD`],
        ['Odometer (simulated)', `${l.decode.odometer.value} ${l.decode.odometer.unit}`],
      ],
    });
  if (l.deals) {
    // A deal's own page needs the key of the account that opened it, which a browser does not send: the page says
    // what each deal is and how to read it, and links nowhere a browser would be refused.
    out.push({
      heading: 'Deals',
      text: l.deals.length
        ? [
            'Each deal, its checklist and its next step: GET /buy/deals/{id} with the key of the account that ' +
              'opened it (Authorization: Bearer <key>).',
          ]
        : ['No deal is open for this VIN.'],
      facts: l.deals.map((d) => [d.id, `${d.workflow} deal, ${d.state}, opened ${d.createdAt}`]),
    });
  }
  if (!l.facts.length && !l.decode && !l.deals?.length)
    out.push({ heading: 'Facts', text: [`Nothing on file from ${l.noun} for this VIN yet.`] });
  for (const f of l.facts) {
    const c: Capability | undefined = (
      Object.values(nouns.find((n) => n.noun === l.noun)!.capabilities) as Capability[]
    ).find((x) => x.name === f.capability);
    out.push({
      heading: `${f.capability} (${f.answer})`,
      text: [`Posted ${f.postedAt}.`],
      links: c ? [{ label: `${c.method} ${c.path}`, href: `/catalog/${l.noun}#${c.verb}`, note: c.summary }] : [],
      code: pretty(f.value),
    });
  }
  return out;
}

/** Everything posted for a VIN. */
export async function recordData(deps: GatewayDeps, vin: string, requestId: string) {
  const [facts, deals, decoded] = await Promise.all([
    factsFor(deps.db, vin),
    dealsFor(deps, vin, requestId),
    decodeOf(deps, vin, requestId),
  ]);
  // The data pillar unreachable: the record still shows what is posted, and says the decode is missing.
  const decode = decoded?.decode ?? {
    vin,
    year: null,
    make: null,
    model: null,
    unavailable: 'the data pillar did not answer; retry for the decode',
  };
  const provenance = decoded?.provenance ?? {
    simulated: true,
    environment: 'sandbox',
    source: 'none',
    real: [],
    simulatedFields: [],
  };
  const lenses = nouns.map((n) => lensData(n as Noun<any>, vin, facts, deals, decoded?.decode ?? null));
  return {
    type: 'OK' as const,
    vin,
    decode,
    provenance,
    nouns: Object.fromEntries(
      lenses.map((l) => [l.noun, { facts: l.facts, lens: l.lens, ...(l.deals ? { deals: l.deals } : {}) }]),
    ),
    deals: deals.map((d) => ({ ...d, link: dealLink(d.id) })),
    links: {
      self: `/${vin}`,
      decode: `/decode/${vin}`,
      deal: deals.length ? dealLink(deals[deals.length - 1]!.id) : null,
      listing: `/decode/${vin}`,
      nouns: Object.fromEntries(lenses.map((l) => [l.noun, l.lens])),
      catalog: '/catalog',
    },
    _lenses: lenses,
  };
}

export function recordFace(r: Awaited<ReturnType<typeof recordData>>): { json: unknown; doc: Doc } {
  const { _lenses, ...json } = r;
  const d = r.decode;
  const doc: Doc = {
    title: `${[d.year, d.make, d.model].filter((x) => x != null).join(' ')} — VIN ${r.vin}`.replace(/^ — /, ''),
    summary: `Every fact posted for VIN ${r.vin}: its decode, each noun's facts on file and its deals.`,
    links: [
      { label: 'Decode (the listing data)', href: r.links.decode },
      ...(r.deals.length ? [{ label: 'Deals on this VIN', href: '#deal' }] : []),
      { label: 'Catalog', href: '/catalog' },
    ],
    sections: [
      {
        heading: 'Vehicle',
        id: 'summary',
        facts: [
          ['VIN', r.vin],
          ['Model year', String(d.year ?? '—')],
          ['Make', d.make ?? '—'],
          ['Model', d.model ?? '—'],
          ['Trim', d.trim?.name ?? '—'],
          ['Body', d.body?.class ?? '—'],
          ['Engine', d.engine?.description ?? d.engine?.model ?? '—'],
          ['Manufacturer', d.manufacturer ?? '—'],
          ['Plant', [d.plant?.city, d.plant?.state, d.plant?.country].filter(Boolean).join(', ') || '—'],
        ],
        text: [
          `From ${String(r.provenance.source)}. ` +
            'Simulated in the sandbox (no public source gives them): ' +
            `${(r.provenance.simulatedFields as string[]).join(', ') || 'none'}.`,
        ],
      },
      ..._lenses.map((l) => ({
        heading: l.noun,
        id: l.noun,
        links: [
          { label: `${l.noun} lens for this VIN`, href: l.lens },
          { label: `${l.noun} in the catalog`, href: l.links.catalog },
        ],
        sections: lensSections(l),
      })),
    ],
  };
  return { json, doc };
}
