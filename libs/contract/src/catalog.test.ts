import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  anyAnswer,
  answerSchema,
  canonicalJson,
  capabilities,
  catalogDigest,
  describeCatalog,
  idSequence,
  isIdOf,
  newId,
  nouns,
  percentText,
  price,
  priceShort,
  priceText,
} from './index.ts';
import { sha256Hex } from './sha256.ts';

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

  it('computes the digest without node:crypto, to the same value node:crypto gives', () => {
    const nodeSha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(catalogDigest()).toBe('sha256:' + nodeSha(canonicalJson(describeCatalog())));
    // Every padding boundary (55, 56, 63, 64 bytes), multi-byte UTF-8, and an empty string.
    for (const s of [
      '',
      'abc',
      'a'.repeat(55),
      'a'.repeat(56),
      'a'.repeat(63),
      'a'.repeat(64),
      'a'.repeat(1000),
      'é€𝄞 ünïcode',
      '{"k":"v"}'.repeat(97),
    ]) {
      expect(sha256Hex(s)).toBe(nodeSha(s));
    }
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('mints ids from Web Crypto: prefix, then 16 base64url characters, never twice the same', () => {
    const ids = Array.from({ length: 2000 }, () => newId('deal'));
    for (const id of ids) expect(id).toMatch(/^deal_[A-Za-z0-9_-]{16}$/);
    for (const id of ids) expect(isIdOf('deal', id)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const next = idSequence('request');
    const [a, b] = [next(), next()];
    expect(a).toMatch(/^req_[A-Za-z0-9_-]{8}0{6}$/);
    expect(b).toBe(a.slice(0, -6) + '000001');
  });

  it('keeps rates as decimal strings and turns them into percentages without float arithmetic', () => {
    expect(['0.029', '0.05', '0.1', '0.01', '0.125', '0.0001', '1'].map(percentText)).toEqual([
      '2.9',
      '5',
      '10',
      '1',
      '12.5',
      '0.01',
      '100',
    ]);
    expect(priceText(price.takeRate('0.029', 'the amount paid', '4.35', '10.00'))).toBe(
      '2.9% of the amount paid, sandbox quote 4.35 USD (ceiling 10.00)',
    );
    // The one-line price of the front door: the currency said elsewhere, once.
    expect(
      [
        price.free(),
        price.flat('1.00'),
        price.metered('0.10', 'subscription'),
        price.takeRate('0.05', 'x', '7.50', '15.00'),
      ].map(priceShort),
    ).toEqual(['free', '1.00', '0.10 per subscription', '5% ≤ 15.00']);
    expect(() => price.takeRate('2.9', 'x', '1.00', '1.00')).toThrow(/between 0 and 1/);
    expect(() => price.takeRate('0.0', 'x', '1.00', '1.00')).toThrow(/between 0 and 1/);
    const takeRates = capabilities.flatMap((c) => (c.price.model === 'take-rate' ? [c.price] : []));
    expect(takeRates.length).toBeGreaterThan(0);
    for (const p of takeRates) expect(p.rate).toMatch(/^0\.\d*[1-9]$/);
  });

  it('validates envelopes of every kind and rejects malformed ones', () => {
    const base = {
      answers: 'X@1',
      evidence: {},
      provenance: { simulated: true, environment: 'sandbox', source: 't@1' },
      events: [],
      meter: { charged: '0.00', posted: true },
    };
    expect(anyAnswer.safeParse({ type: 'OK', value: { a: 1 }, ...base }).success).toBe(true);
    expect(anyAnswer.safeParse({ type: 'EMPTY', value: {}, ...base }).success).toBe(true);
    expect(
      anyAnswer.safeParse({ type: 'BLOCKED', value: { code: 'key-required', message: 'm' }, ...base }).success,
    ).toBe(true);
    expect(
      anyAnswer.safeParse({ type: 'BLOCKED', value: { code: 'no-such-code', message: 'm' }, ...base }).success,
    ).toBe(false);
    expect(anyAnswer.safeParse({ type: 'MAYBE', value: {}, ...base }).success).toBe(false);
    expect(anyAnswer.safeParse({ type: 'OK', value: {}, ...base, meter: { charged: '0', posted: true } }).success).toBe(
      false,
    );
    const typed = answerSchema(capabilities[0]!.value);
    expect(typed.safeParse({ type: 'OK', value: { nonsense: true }, ...base }).success).toBe(false);
  });
});
