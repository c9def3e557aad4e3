import { describe, expect, it } from 'vitest';
import { anyAnswer, answerSchema, capabilities, catalogDigest, describeCatalog, nouns } from './index.ts';

describe('the catalog', () => {
  it('gives every capability a unique wire name, subject, route and answer name', () => {
    const unique = (xs: string[]) => new Set(xs).size === xs.length;
    expect(unique(capabilities.map((c) => c.name))).toBe(true);
    expect(unique(capabilities.map((c) => c.subject))).toBe(true);
    expect(unique(capabilities.map((c) => `${c.method} ${c.path}`))).toBe(true);
    const names = capabilities.map((c) => c.answer);
    // fee and quote share a shape but not a name; apiKey's ApiKey@1 is the one name the spec reuses (rotate, revoke, mint).
    const dupes = names.filter((n, i) => names.indexOf(n) !== i);
    expect(new Set(dupes)).toEqual(new Set(dupes.length ? ['ApiKey@1'] : []));
  });

  it('derives subjects from pillar, noun and verb, and paths carry no version segment', () => {
    for (const c of capabilities) {
      expect(c.subject).toBe(`cap.${c.pillar}.${c.noun}.${c.verb}`);
      expect(c.path).not.toMatch(/\/v\d+\//);
      expect(c.answer).toMatch(/^[A-Za-z]+@\d+$/);
      for (const e of c.events) expect(e.type).toMatch(/^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*@\d+$/);
    }
  });

  it('counts facets per noun', () => {
    for (const n of nouns) {
      const total = n.facets.data + n.facets.services + n.facets.commerce;
      expect(total).toBe(Object.keys(n.capabilities).length);
    }
  });

  it('has a stable digest over a JSON description', () => {
    expect(catalogDigest()).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(JSON.stringify(describeCatalog())).nouns.length).toBe(nouns.length);
  });

  it('validates envelopes of every kind and rejects malformed ones', () => {
    const base = { answers: 'X@1', evidence: {}, provenance: { simulated: true, environment: 'sandbox', source: 't@1' }, events: [], meter: { charged: '0.00', posted: true } };
    expect(anyAnswer.safeParse({ type: 'OK', value: { a: 1 }, ...base }).success).toBe(true);
    expect(anyAnswer.safeParse({ type: 'EMPTY', value: {}, ...base }).success).toBe(true);
    expect(anyAnswer.safeParse({ type: 'BLOCKED', value: { code: 'key-required', message: 'm' }, ...base }).success).toBe(true);
    expect(anyAnswer.safeParse({ type: 'BLOCKED', value: { code: 'no-such-code', message: 'm' }, ...base }).success).toBe(false);
    expect(anyAnswer.safeParse({ type: 'MAYBE', value: {}, ...base }).success).toBe(false);
    expect(anyAnswer.safeParse({ type: 'OK', value: {}, ...base, meter: { charged: '0', posted: true } }).success).toBe(false);
    const typed = answerSchema(capabilities[0]!.value);
    expect(typed.safeParse({ type: 'OK', value: { nonsense: true }, ...base }).success).toBe(false);
  });
});
