import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  claimOf,
  claimWith,
  IllegalTransition,
  leaseRunOut,
  lifecycleDiagram,
  lifecycles,
  nextState,
  type Entity,
  type Lifecycle,
} from './lifecycles.ts';
import { DOC, between } from '../scripts/money-doc.ts';

/** Every (state, event) pair of every entity: the listed ones move where the table says, every other one throws. */
describe('the money model (lifecycles.ts)', () => {
  for (const [entity, l] of Object.entries(lifecycles) as [Entity, (typeof lifecycles)[Entity]][]) {
    const events = [...new Set(l.transitions.map((t) => t.event))];
    it(`${entity}: each state × event moves as listed, and nothing else moves`, () => {
      let listed = 0;
      for (const from of l.states)
        for (const event of events) {
          const t = l.transitions.find((x) => x.event === event)!;
          if ((t.from as readonly string[]).includes(from)) {
            expect(nextState(entity, from, event as never)).toBe(t.to);
            listed++;
          } else expect(() => nextState(entity, from, event as never)).toThrow(IllegalTransition);
        }
      expect(listed).toBe(l.transitions.reduce((n, t) => n + t.from.length, 0));
      expect(() => nextState(entity, l.initial, 'no-such-event' as never)).toThrow(IllegalTransition);
    });
    it(`${entity}: every state is reached from ${l.initial}, final states are left by nothing, others by something`, () => {
      const seen = new Set<string>([l.initial]);
      for (let grew = true; grew;) {
        grew = false;
        for (const t of l.transitions)
          if (t.from.some((f) => seen.has(f)) && !seen.has(t.to)) grew = seen.add(t.to) && true;
      }
      expect([...seen].sort()).toEqual([...l.states].sort());
      for (const s of l.states) {
        const leaves = l.transitions.some((t) => (t.from as readonly string[]).includes(s));
        expect(leaves, s).toBe(!(l.final as readonly string[]).includes(s));
      }
    });
  }

  for (const [entity, l] of Object.entries(lifecycles) as [Entity, Lifecycle<string, string>][])
    it(`${entity}: its moves and guards name its own states; final, in flight and open never overlap`, () => {
      const states = new Set(l.states);
      const named = [
        l.initial,
        ...l.final,
        ...l.inFlight,
        ...l.leased,
        ...l.transitions.flatMap((t) => [...t.from, t.to]),
      ];
      expect(named.filter((s) => !states.has(s))).toEqual([]);
      expect(l.final.filter((s) => l.inFlight.includes(s))).toEqual([]);
      expect(l.leased.filter((s) => !l.inFlight.includes(s))).toEqual([]);
      // The one claim rule, from the guards alone.
      for (const s of l.states) {
        const held = claimOf(entity, s, new Date(2_000), 1_000);
        const runOut = claimOf(entity, s, new Date(1_000), 1_000);
        if (l.final.includes(s)) expect([held, runOut]).toEqual(['final', 'final']);
        else if (l.leased.includes(s)) expect([held, runOut]).toEqual(['busy', 'take']);
        else if (l.inFlight.includes(s)) expect([held, runOut]).toEqual(['busy', 'busy']);
        else expect([held, runOut]).toEqual(['open', 'open']);
      }
    });

  it('the lease rule: held before its end, run out at it and after (and with none)', () => {
    expect(leaseRunOut(new Date(1_001), 1_000)).toBe(false);
    expect(leaseRunOut(new Date(1_000), 1_000)).toBe(true);
    expect(leaseRunOut(null, 1_000)).toBe(true);
  });

  it("docs/money.md's diagrams are the table's (regenerate: pnpm gen:money)", () => {
    const doc = readFileSync(DOC, 'utf8');
    expect(between(doc)).toBe(lifecycleDiagram());
  });
});

describe('claimWith: the one claim routine runs the record’s own action for the table’s decision', () => {
  const actions = { replay: () => 'replay', wait: () => 'wait', take: (how: 'open' | 'take') => `take:${how}` };
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('final replays, in flight waits, a lease run out is taken, nothing under way is opened', () => {
    expect(claimWith('intent', { status: 'settled' }, now, actions)).toBe('replay');
    expect(claimWith('intent', { status: 'settling' }, now, actions)).toBe('wait');
    expect(claimWith('intent', { status: 'pending' }, now, actions)).toBe('take:open');
    expect(claimWith('execution', { status: 'running', lease_until: new Date(now + 1000) }, now, actions)).toBe('wait');
    expect(claimWith('execution', { status: 'running', lease_until: new Date(now - 1) }, now, actions)).toBe(
      'take:take',
    );
    expect(claimWith('execution', { status: 'ready', lease_until: null }, now, actions)).toBe('take:open');
  });
});
