import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mintKey, startHarness, type Harness } from './support/harness.ts';

// The VIN record as a real page in headless Chromium (Debian's package): title, a section per noun,
// links that resolve, no script needed. Skipped only when no Chromium binary exists (CI installs it).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`[record-page] skipping the browser test: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
const VIN = '1HGCM82633A004352';

describe.skipIf(!haveChromium)('the VIN record page in headless Chromium', () => {
  let h: Harness;
  let browser: import('playwright-core').Browser;
  beforeAll(async () => {
    h = await startHarness('embedded');
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--headless'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('renders title, one section per noun and links that resolve', async () => {
    const { key } = await mintKey(h.baseUrl);
    await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    await call(h.baseUrl, 'POST', '/deals/open', { key, body: { workflow: 'buy', vin: VIN } });
    const page = await browser.newPage({ javaScriptEnabled: false });
    const res = await page.goto(`${h.baseUrl}/${VIN}`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe(`2003 Honda Accord — VIN ${VIN}`);
    const sections = await page.locator('main > section > h2').allTextContents();
    const catalog = await (await fetch(`${h.baseUrl}/catalog`)).json();
    expect(sections).toEqual(['Vehicle', ...catalog.nouns.map((n: any) => n.noun)]);
    expect(await page.locator('#signing pre').first().textContent()).toContain('"noun": "signing"');

    const hrefs = [
      ...new Set(await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))),
    ];
    const local = hrefs.filter((u) => u.startsWith(h.baseUrl) && !u.includes('/buy/deals/') && !u.endsWith('/pricing'));
    expect(local.length).toBeGreaterThan(10);
    for (const u of local) expect((await fetch(u, { headers: { accept: 'text/html' } })).status, u).toBe(200);

    mkdirSync(new URL('./artifacts/', import.meta.url), { recursive: true });
    await page.screenshot({ path: new URL('./artifacts/record-page.png', import.meta.url).pathname, fullPage: true });
    await page.close();
  }, 60_000);
});
