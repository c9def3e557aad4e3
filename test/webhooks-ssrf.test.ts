import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, parseSettings } from '@vcs/platform';
import { embeddedConfig, startEmbedded } from '@vcs/embedded';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';

// Registration refuses what delivery would refuse, in every notation (register is offer-gated: Accept-Price settles it).
const register = (h: Pick<Harness, 'baseUrl'>, key: string, url: string) =>
  call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url }, headers: { 'accept-price': '1000.00 USD' } });

const FORBIDDEN = [
  'http://[64:ff9b::a00:1]/hook',
  'http://[::ffff:0:a00:1]/hook',
  'http://[2002:a9fe:a9fe::]/hook',
  'http://[fec0::1]/hook',
  'http://[::a9fe:a9fe]/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://0x0a.1/hook',
  'http://[fd00::1]/hook',
  'http://100.64.0.1/hook',
];

describe.each(modes())('webhook targets are refused at registration (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it.each(FORBIDDEN)('%s answers 400 invalid-input naming the url, and charges nothing', async (url) => {
    const { key } = await mintKey(h.baseUrl);
    const r = await register(h, key, url);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      type: 'BLOCKED',
      value: { code: 'invalid-input', problems: [{ field: 'url' }] },
      meter: { charged: '0.00' },
    });
    expect(r.json.value.message).toMatch(/private, loopback or reserved/);
  });

  it('a public address registers', async () => {
    const { key } = await mintKey(h.baseUrl);
    const r = await register(h, key, 'http://93.184.216.34/hook');
    expect(r.status).toBe(200);
    expect(r.json.value.registration.id).toMatch(/^ep_|^whe_|^wh/);
  });

  it('loopback is refused in the distributed mode, and in the embedded mode when it listens beyond loopback', async () => {
    const { key } = await mintKey(h.baseUrl);
    const expected = mode === 'distributed' ? 400 : 200; // the embedded harness listens on 127.0.0.1
    expect((await register(h, key, 'http://[::127.0.0.1]:9/hook')).status).toBe(expected);
    if (mode === 'embedded') {
      // The embedded process with HOST=0.0.0.0: its settings, parsed once at start, reach the services pillar.
      const wide = await startEmbedded({
        pgliteDir: 'memory://',
        log: createLogger('test', 'silent'),
        settings: parseSettings(embeddedConfig, { HOST: '0.0.0.0' }),
      });
      try {
        const base = await wide.app.listen({ port: 0, host: '127.0.0.1' });
        const other = await mintKey(base);
        expect((await register({ baseUrl: base }, other.key, 'http://127.0.0.1:9/hook')).status).toBe(400);
      } finally {
        await wide.stop();
      }
    }
  });
});
