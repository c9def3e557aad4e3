import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, nouns } from '@vcs/contract';
import { startHarness, type Harness } from './support/harness.ts';

/**
 * An agent that knows only the base URL, reading only what the documents say, on a budget: tokens are counted
 * as characters / 4 of every response body it reads. The goals: the first paid answer within 6
 * requests and 4,000 tokens; any capability found within 4,000 tokens; /llms.txt under 2,000 and each noun page
 * under 1,500.
 */
const tokens = (s: string) => Math.ceil(s.length / 4);
const VIN = '1HGCM82633A004352';

class Agent {
  requests = 0;
  read = 0;
  constructor(private base: string) {}
  async fetch(method: string, url: string, init: { key?: string; body?: unknown } = {}) {
    this.requests++;
    const r = await fetch(url.startsWith('http') ? url : this.base + url, {
      method,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      headers: {
        ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });
    const text = await r.text();
    this.read += tokens(text);
    return {
      status: r.status,
      text,
      json: (() => {
        try {
          return JSON.parse(text);
        } catch {
          return null;
        }
      })(),
    };
  }
}

/** The Markdown link an agent would follow from a page, by its label. */
const linkTo = (page: string, label: string) => new RegExp(`\\[${label}[^\\]]*\\]\\(([^)]+)\\)`).exec(page)?.[1];
/** A capability's call line on a noun page: `METHOD /path` · gate G. */
const callLines = (page: string) =>
  [...page.matchAll(/`(GET|POST) (\/[^`]+)` · gate (\w+)/g)].map((m) => ({ method: m[1]!, path: m[2]!, gate: m[3]! }));

describe('an agent on a token budget (embedded)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('embedded');
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('mints, calls free, meets an offer, settles it and reads the answer in ≤ 6 requests and ≤ 4,000 tokens', async () => {
    const agent = new Agent(h.baseUrl);
    const llms = (await agent.fetch('GET', '/llms.txt')).text;
    expect(tokens(llms)).toBeLessThan(2000);
    // The front door says to mint with POST at the link it gives, and to open the page of the noun needed.
    expect(llms).toMatch(/POST \/keys/);
    const page = (await agent.fetch('GET', linkTo(llms, 'signing')!)).text;
    const { key } = (await agent.fetch('POST', linkTo(llms, 'Mint a key')!)).json;
    expect(key).toMatch(/^vcs_/);
    const free = callLines(page).find((l) => l.gate === 'none' && l.method === 'GET')!;
    const read = await agent.fetch('GET', `${free.path}?vin=${VIN}`, { key });
    expect(read.json.type).toBe('OK');
    const paid = callLines(page).find((l) => l.gate === 'offer')!;
    const offer = await agent.fetch(paid.method, paid.path, { key, body: { vin: VIN } });
    expect(offer.status).toBe(402);
    const settle = offer.json.value.settle as { method: string; path: string };
    const answer = await agent.fetch(settle.method, settle.path, { key });
    expect(answer.status).toBe(200);
    expect(answer.json.type).toBe('OK');
    expect(agent.requests).toBeLessThanOrEqual(6);
    expect(agent.read, `${agent.read} tokens read`).toBeLessThanOrEqual(4000);
  });

  it('finds any capability from /llms.txt and its noun page within 4,000 tokens; every noun page is under 1,500', async () => {
    const base = new Agent(h.baseUrl);
    const llms = (await base.fetch('GET', '/llms.txt')).text;
    const pages = new Map<string, string>();
    for (const n of nouns) {
      const page = (await base.fetch('GET', linkTo(llms, n.noun)!)).text;
      expect(tokens(page), `${n.noun} page`).toBeLessThan(1500);
      pages.set(n.noun, page);
    }
    for (const c of capabilities) {
      const page = pages.get(c.noun)!;
      expect(tokens(llms) + tokens(page), c.name).toBeLessThanOrEqual(4000);
      // The page names it, with what is needed to call it: route, gate, where the inputs go, the answer.
      expect(page).toContain(`## ${c.name}`);
      expect(page).toContain(
        `\`${c.method} ${c.path}\` · gate ${c.gate} · ${c.method === 'GET' ? 'query' : 'JSON body'}: `,
      );
      expect(page).toContain(`answers ${c.answer}`);
    }
  });
});
