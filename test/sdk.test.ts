import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, deal, signing, TransportError } from '@vcs/sdk';
import { mintKey, modes, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

describe.each(modes())('SDK against the service (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness(mode); });
  afterAll(async () => { await h?.stop(); });

  it('calls a noun verb with one params object and narrows the Answer', async () => {
    const client = createClient({ baseUrl: h.baseUrl });
    const a = await signing.status({ vin: VIN }, { client });
    expect(a.type).toBe('OK');
    if (a.type === 'OK') expect(a.value.ceremony.id).toBeTruthy();
    const e = await signing.status({ vin: VIN }, { client, headers: { 'Sandbox-Trigger': 'empty' } });
    expect(e.type).toBe('EMPTY');
  });

  it('sends the key and reports a transport failure by throwing', async () => {
    const { key } = await mintKey(h.baseUrl);
    const d = await deal.open({ workflow: 'buy', vin: VIN }, { client: createClient({ baseUrl: h.baseUrl, key }) });
    expect(d.type).toBe('OK');
    await expect(signing.status({}, { client: createClient({ baseUrl: 'http://127.0.0.1:1' }) })).rejects.toBeInstanceOf(TransportError);
  });
});
