import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  catalogDigest,
  describeCatalog,
  eventDataSchema,
  parsePlatformEvent,
  platformEvent,
  platformEvents,
  type EventEnvelope,
} from '@vcs/contract';
import { EVENTS_DOC, eventsDoc } from '../libs/sdk/scripts/generate.ts';

// Every event type is declared once in the contract; these check what is derived from the declarations.
describe('declared events', () => {
  it('docs/events.md lists every event type with its data, as `pnpm gen` writes it', () => {
    const text = readFileSync(EVENTS_DOC, 'utf8');
    expect(text).toBe(eventsDoc(text));
  });

  it('the catalog lists every event type with its data schema', () => {
    const events = describeCatalog().events;
    for (const type of Object.keys(platformEvents)) expect(events.find((e) => e.type === type)?.data).toBeTruthy();
    expect(events.find((e) => e.type === 'Signing.quoted@1')?.emittedBy).toEqual([
      { capability: 'signing.quote', when: 'success' },
    ]);
    expect(catalogDigest()).toMatch(/^sha256:/);
  });

  it('a producer cannot write a platform event whose data breaks its declaration', () => {
    const base = { occurredAt: new Date(0).toISOString(), account: null, capability: null, vin: null, simulated: true };
    expect(() =>
      platformEvent('Handoff.refused@1', base, { handoffId: 'ho_1', verb: 'sign', capability: null } as never),
    ).toThrow();
    const e = platformEvent('Handoff.refused@1', base, {
      handoffId: 'ho_1',
      verb: 'sign',
      capability: null,
      origin: { dealId: 'deal_1', step: 2 },
    });
    const read = parsePlatformEvent({ ...e, id: 'evt_1' } as EventEnvelope, 'Handoff.refused@1');
    expect(read?.data.origin).toEqual({ dealId: 'deal_1', step: 2 });
    // A consumer asking for other types, or given data of another shape, gets null rather than a cast.
    expect(parsePlatformEvent({ ...e, id: 'evt_1' } as EventEnvelope, 'Intent.settled@1')).toBeNull();
    expect(parsePlatformEvent({ ...e, id: 'evt_1', data: { handoffId: 1 } } as EventEnvelope)).toBeNull();
  });

  it('a capability event carries no secret-marked member', () => {
    const schema = eventDataSchema('ApiKey.created@1', 'apiKey.create')!;
    const parsed = schema.parse({
      apiKey: 'key_1',
      prefix: 'p',
      subject: 'acct_1',
      scopes: [],
      status: 'active',
      createdAt: new Date(0).toISOString(),
      secretOnce: 'vcs_sk_x',
      by: 'key_0',
    }) as Record<string, unknown>;
    expect(parsed.secretOnce).toBeUndefined();
    expect(parsed.by).toBe('key_0');
  });
});
