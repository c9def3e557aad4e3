import { describe, expect, it } from 'vitest';
import { capabilityByName } from '@vcs/contract';
import { buyChecklist, dealerZip, kindOf, newChecklist } from './checklist.ts';
import { stateOfZip } from './zip.ts';

describe('buy checklist', () => {
  it('names only capabilities of the catalog, and arrives as their gates say', () => {
    for (const s of buyChecklist) {
      if (s.capability) expect(capabilityByName(s.capability), s.capability).toBeDefined();
      expect(kindOf(s).missing).toBe(false);
    }
    expect(newChecklist().map((s) => s.kind)).toEqual([
      'execute',
      'offer',
      'execute',
      'offer',
      'offer',
      'human',
      'human',
      'offer',
      'human',
      'human',
      'offer',
      'offer',
    ]);
  });

  it('carries each of the four human verbs', () => {
    expect(
      new Set(
        newChecklist()
          .map((s) => s.verb)
          .filter(Boolean),
      ),
    ).toEqual(new Set(['authorize', 'notarize', 'sign', 'pay']));
  });

  it('builds inputs the capabilities accept', async () => {
    const src = { vin: '1HGCM82633A004352', buyer: { name: 'A', zip: '10001-1234' }, fact: async () => null };
    for (const s of buyChecklist) {
      const input = await s.input(src);
      if (s.capability)
        expect(capabilityByName(s.capability)!.request.safeParse(input).success, s.capability).toBe(true);
    }
  });

  it('finds a state by ZIP prefix and a stable dealer ZIP', () => {
    expect(stateOfZip('94103')).toBe('CA');
    expect(stateOfZip('10001')).toBe('NY');
    expect(stateOfZip('78701')).toBe('TX');
    expect(stateOfZip('00000')).toBeNull();
    expect(dealerZip('1HGCM82633A004352')).toBe(dealerZip('1HGCM82633A004352'));
  });
});
