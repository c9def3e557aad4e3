import { mkdirSync } from 'node:fs';
import axe from 'axe-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, launchChromium } from './support/chromium.ts';
import { call, mintKey, startHarness, type Harness } from './support/harness.ts';

// The service's pages in headless Chromium (Debian's package), as a person with a browser meets them: the VIN
// record (with a deal on it) renders without a script, and every HTML page is checked while every same-origin link
// is followed: each answers a browser under 400, and each HTML page has no console error and no serious or critical
// axe-core violation. Skipped, with a line saying so, only when no Chromium binary exists outside CI.
const VIN = '1HGCM82633A004352';
/** What Chromium sends when it navigates. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

interface Visit {
  status: number;
  html: boolean;
  from: string;
}

describe.runIf(chromiumFor('the browser pages suite'))('the pages in headless Chromium', () => {
  let h: Harness;
  let browser: import('playwright-core').Browser;
  beforeAll(async () => {
    h = await startHarness('embedded');
    browser = await launchChromium();
    const { key } = await mintKey(h.baseUrl);
    await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    const deal = await call(h.baseUrl, 'POST', '/deals/open', { key, body: { workflow: 'buy', vin: VIN } });
    expect(deal.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('renders the VIN record: title and one section per noun, with scripts off', async () => {
    const page = await browser.newPage({ javaScriptEnabled: false });
    const res = await page.goto(`${h.baseUrl}/${VIN}`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe(`2003 Honda Accord — VIN ${VIN}`);
    const sections = await page.locator('main > section > h2').allTextContents();
    const catalog = await (await fetch(`${h.baseUrl}/catalog`)).json();
    expect(sections).toEqual(['Vehicle', ...catalog.nouns.map((n: any) => n.noun)]);
    expect(await page.locator('#signing pre').first().textContent()).toContain('"noun": "signing"');

    mkdirSync(new URL('./artifacts/', import.meta.url), { recursive: true });
    await page.screenshot({ path: new URL('./artifacts/record-page.png', import.meta.url).pathname, fullPage: true });
    await page.close();
  }, 60_000);

  it('follows every same-origin link: each under 400, no console error, no serious or critical axe violation', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`${page.url()}: console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${page.url()}: ${r.url()} answered ${r.status()}`);
    });

    // Every HTML page the service has, linked or not: the record, the catalog and its triggers, and each noun's
    // landing, VIN lens, catalog page and live capabilities' pages. The crawl starts from them all.
    const catalog = (await call(h.baseUrl, 'GET', '/catalog')).json;
    const pages = [
      '/',
      `/${VIN}`,
      '/catalog',
      '/catalog/triggers',
      ...catalog.nouns.flatMap((n: any) => [
        `/${n.door}`,
        `/${n.door}/${VIN}`,
        `/catalog/${n.noun}`,
        ...n.capabilities.filter((c: any) => c.page).map((c: any) => c.page),
      ]),
    ];
    const visits = new Map<string, Visit>();
    const queue: [url: string, from: string][] = pages.map((p) => [h.baseUrl + p, 'start']);
    while (queue.length) {
      const [url, from] = queue.shift()!;
      if (visits.has(url)) continue;
      // The answer a browser's navigation gets (a Markdown or JSON link would be a download, not a page).
      const head = await page.request.get(url, { headers: { accept: BROWSER_ACCEPT }, maxRedirects: 0 });
      const html = /text\/html/.test(head.headers()['content-type'] ?? '');
      visits.set(url, { status: head.status(), html, from });
      // /docs is Swagger UI's page, loaded, opened and checked by its own test below.
      if (!html || head.status() >= 400 || new URL(url).pathname === '/docs') continue;

      const res = await page.goto(url);
      expect(res?.status(), url).toBeLessThan(400);
      await page.addScriptTag({ content: axe.source });
      const violations = await page.evaluate(async () => {
        const r = await (window as unknown as { axe: typeof axe }).axe.run(document);
        return r.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      for (const v of violations) problems.push(`${url}: axe ${v}`);
      const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
      for (const href of hrefs) {
        const u = new URL(href);
        if (u.origin !== h.baseUrl) continue;
        u.hash = '';
        queue.push([u.href, url]);
      }
    }
    await page.close();

    const refused = [...visits].filter(([, v]) => v.status >= 400).map(([u, v]) => `${u} ${v.status} (from ${v.from})`);
    expect({ refused, problems }).toEqual({ refused: [], problems: [] });
    const html = [...visits].filter(([, v]) => v.html).map(([u]) => u.slice(h.baseUrl.length));
    expect(html).toEqual(expect.arrayContaining(pages));
    expect(visits.size).toBeGreaterThan(pages.length); // links beyond the pages: JSON, Markdown, text documents
  }, 300_000);

  it('renders /docs from /openapi.json, served from this origin alone: every operation listed, no serious or critical axe violation', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => {
      if (new URL(r.url()).origin !== h.baseUrl) problems.push(`asked another origin: ${r.url()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.url()} answered ${r.status()}`);
    });
    const oas = (await call(h.baseUrl, 'GET', '/openapi.json')).json;
    const operations = Object.entries(oas.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
          .map((m) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    expect(operations.length).toBeGreaterThan(10);

    const res = await page.goto(`${h.baseUrl}/docs`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Vehicle Capability Service — API reference');
    const blocks = page.locator('#reference .opblock');
    await blocks.nth(operations.length - 1).waitFor({ timeout: 30_000 });
    const listed = await blocks.evaluateAll((els) =>
      els.map(
        (e) =>
          `${e.querySelector('.opblock-summary-method')?.textContent} ` +
          `${e.querySelector('[data-path]')?.getAttribute('data-path')}`,
      ),
    );
    expect(listed.sort()).toEqual(operations);

    // As it loads, then as a person uses it: every operation opened, and each in "Try it out" mode.
    await page.addScriptTag({ content: axe.source });
    const serious = () =>
      page.evaluate(async () => {
        const r = await (window as unknown as { axe: typeof axe }).axe.run(document);
        return r.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
    const violations = { loaded: await serious(), opened: [] as string[] };
    const clickAll = (selector: string) =>
      page.evaluate((s) => document.querySelectorAll<HTMLElement>(s).forEach((b) => b.click()), selector);
    const count = (selector: string) => () => page.locator(selector).count();
    await clickAll('#reference .opblock-summary-control');
    await expect.poll(count('#reference .opblock.is-open .opblock-body'), { timeout: 30_000 }).toBe(operations.length);
    const tries = await page.locator('#reference .try-out__btn').count();
    expect(tries).toBeGreaterThan(0);
    await clickAll('#reference .try-out__btn');
    await expect.poll(count('#reference .btn.execute'), { timeout: 30_000 }).toBe(tries);
    violations.opened = await serious();
    expect({ violations, problems }).toEqual({ violations: { loaded: [], opened: [] }, problems: [] });
    await page.close();
  }, 240_000);
});
