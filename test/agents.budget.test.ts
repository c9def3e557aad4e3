import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, nouns } from '@vcs/contract';
import { payingFetch, receiptOf, type Rail } from '@vcs/x402-rail';
import { startHarness, type Harness } from './support/harness.ts';
import { type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

/**
 * An agent that knows only the base URL, reading only what the documents say, on a budget. With a key: tokens are
 * counted as characters / 4 of every response body it reads; the first paid answer within 6 requests and 4,000
 * tokens; any capability found within 4,000 tokens; /llms.txt under 2,000 and each noun page under 1,500. With a
 * wallet and no key: from `GET /` to the first paid answer in 3 requests and 8,000 characters of what reaches it
 * (status lines, headers and bodies), a stock x402 client paying the 402 on its behalf.
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

/** Everything a response puts before a reader: its status line, every header and the body. */
async function readWhole(r: Response) {
  const body = await r.text();
  const head = [`HTTP/1.1 ${r.status} ${r.statusText}`, ...[...r.headers].map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  return { body, chars: head.length + 4 + body.length };
}

/** The lines of a Markdown page under the heading that links `noun`'s page, up to the next heading. */
function sectionOf(page: string, noun: string): string[] {
  const lines = page.split('\n');
  const from = lines.findIndex((l) => new RegExp(`^#+ \\[${noun}\\]\\(`).test(l));
  const rest = lines.slice(from + 1);
  return from < 0 ? [] : rest.slice(0, (rest.findIndex((l) => l.startsWith('#')) + 1 || rest.length + 1) - 1);
}

describe('a wallet-only agent from the bare address (embedded, x402 on)', () => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService('embedded', 1));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  it('GET / finds the route and its price, and a stock x402 client pays it: 3 requests, ≤ 8,000 characters read', async () => {
    // What goes over the wire, for the request count and the log; the agent reads only what reaches it.
    const wire: { status: number; chars: number }[] = [];
    const counted: typeof fetch = async (input, init) => {
      const r = await fetch(input, init);
      wire.push({ status: r.status, chars: (await readWhole(r.clone())).chars });
      return r;
    };
    // First contact: the bare address, as an agent's fetch tool asks for it.
    const door = await counted(`${base}/`, { headers: { accept: '*/*' } });
    expect(door.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(door.headers.get('link')).toBe('</llms.txt>; rel="describedby"');
    const front = await readWhole(door);
    // The agent wants a signing quote: the signing section names its method, route and price in one line.
    const line = sectionOf(front.body, 'signing').find((l) => /^- (GET|POST) \/\S+\/quote /.test(l))!;
    const [, method, path, price] = /^- (GET|POST) (\S+) (.+)$/.exec(line)!;
    expect(price).toBe('1.00');
    expect(front.body).toContain('PAYMENT-REQUIRED');

    // A stock x402 client (@x402/fetch with the exact EVM scheme) calls the route, meets the 402, pays it and
    // hands back the paid answer: the 402 and its PAYMENT-REQUIRED are read by the client, not by the agent.
    const pay = payingFetch(rail.payerKeys[0], { fetch: counted });
    const answer = await pay(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: VIN }),
    });
    expect(answer.status).toBe(200);
    expect(receiptOf(answer)).toMatchObject({ success: true });
    const paid = await readWhole(answer);
    expect(JSON.parse(paid.body)).toMatchObject({ type: 'OK', meter: { payment: { amount: '1.00' } } });

    expect(wire.map((w) => w.status)).toEqual([200, 402, 200]);
    const read = front.chars + paid.chars;
    console.log(
      `wallet-only agent from /: read ${front.chars} + ${paid.chars} = ${read} characters ` +
        `(the 402 its client read: ${wire[1]!.chars}; on the wire in all: ${wire.reduce((n, w) => n + w.chars, 0)})`,
    );
    expect(read).toBeLessThanOrEqual(8000);
  }, 60_000);
});
