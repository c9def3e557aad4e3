import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IllegalTransition, lifecycleDiagram, lifecycles, nextState, type Entity } from './lifecycles.ts';
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

  it("docs/money.md's diagrams are the table's (regenerate: pnpm gen:money)", () => {
    const doc = readFileSync(DOC, 'utf8');
    expect(between(doc)).toBe(lifecycleDiagram());
  });
});
