import type { NamedNoun } from '../capability.ts';

const NOT_PUBLISHED = 'Named in the catalog; its operations are not published yet.';

/** Nouns the spec only names: their counts are known, their operations are not published yet. */
export const namedNouns: NamedNoun[] = [
  {
    noun: 'settlementStatement',
    pillar: 'commerce',
    displayPillar: 'Commerce',
    capabilityCount: 4,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
  {
    noun: 'subrogation',
    pillar: 'services',
    displayPillar: 'Services',
    capabilityCount: 2,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
  {
    noun: 'wash',
    pillar: 'services',
    displayPillar: 'Services',
    capabilityCount: 13,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
  {
    noun: 'wholesaleQuote',
    pillar: 'commerce',
    displayPillar: 'Commerce',
    capabilityCount: 12,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
  {
    noun: 'titleInsurance',
    pillar: 'commerce',
    displayPillar: 'Commerce',
    capabilityCount: 5,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
  {
    noun: 'tow',
    pillar: 'services',
    displayPillar: 'Services',
    capabilityCount: 21,
    mode: 'sandbox',
    published: false,
    summary: NOT_PUBLISHED,
  },
];
