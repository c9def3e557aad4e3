import type { FastifyInstance } from 'fastify';
import { capabilities, describeCapability, nouns, type Capability, type Noun } from '@vcs/contract';
import type { GatewayDeps } from '../../deps.ts';
import { capabilityDoc, catalogDoc, catalogJson, nounDoc, triggersDoc } from '../../faces/catalog-face.ts';
import { publishedMode } from '../../faces/modes.ts';
import { llmsTxt } from '../../faces/llms.ts';
import { CACHE, DOCUMENT, negotiate, sendCached, sendFace, TYPES, type Offer } from '../../faces/negotiate.ts';
import { CATALOG, sendBlocked } from '../../reply.ts';

const triggersJson = () => ({ triggers: Object.fromEntries(capabilities.map((c) => [c.name, c.triggers])) });

/**
 * The bare address: the front door (the /llms.txt text, as Markdown, or as plain text when that is what is asked) to
 * an agent or a terminal, which ask for anything, for text or for nothing; the catalog to a program that asks for
 * JSON, and as a page to a browser.
 */
const FRONT_DOOR: Offer = {
  ranges: { ...DOCUMENT.ranges, 'text/plain': 'text', 'text/*': 'markdown', '*/*': 'markdown' },
  none: 'markdown',
};
/** On every answer of `/`, whichever its format (a 304 and HEAD too): where its text lives, and that Accept chose it. */
const DESCRIBED_BY = '</llms.txt>; rel="describedby"';

/**
 * GET / (the front door, or the catalog by Accept), /catalog, /catalog/<noun>, /catalog/<noun>.<action> (live
 * capabilities); `.md` gives Markdown.
 */
export async function catalogRoutes(app: FastifyInstance, _deps: GatewayDeps) {
  const whole = () => ({ json: catalogJson(), doc: catalogDoc() });
  app.get('/catalog', async (req, reply) => sendFace(req, reply, whole(), CACHE.discovery));
  app.get(
    '/',
    {
      onSend: async (_req, reply, payload) => {
        reply.header('link', DESCRIBED_BY).header('vary', 'Accept');
        return payload;
      },
    },
    async (req, reply) => {
      const f = negotiate(req.headers.accept, FRONT_DOOR);
      if (f === 'json' || f === 'html') return sendFace(req, reply, whole(), CACHE.discovery, f);
      return sendCached(req, reply, llmsTxt(), `${TYPES[f]}; charset=utf-8`, CACHE.discovery);
    },
  );
  app.get('/catalog.md', async (req, reply) => sendFace(req, reply, whole(), CACHE.discovery, 'markdown'));

  app.get('/catalog/triggers', async (req, reply) =>
    sendFace(req, reply, { json: triggersJson(), doc: triggersDoc() }, CACHE.discovery),
  );
  app.get('/catalog/triggers.md', async (req, reply) =>
    sendFace(req, reply, { json: triggersJson(), doc: triggersDoc() }, CACHE.discovery, 'markdown'),
  );

  app.get<{ Params: { page: string } }>('/catalog/:page', async (req, reply) => {
    const md = req.params.page.endsWith('.md');
    const page = md ? req.params.page.slice(0, -3) : req.params.page;
    const [nounName, action, ...rest] = page.split('.');
    const n = nouns.find((x) => x.noun === nounName) as Noun<any> | undefined;
    if (!n || rest.length)
      return sendBlocked(
        reply,
        'not-found',
        `no catalog page ${req.params.page}; the nouns are listed at GET /catalog`,
        { next: CATALOG },
      );
    if (!action) {
      const json = catalogJson().nouns.find((x) => x.noun === n.noun);
      return sendFace(req, reply, { json, doc: nounDoc(n) }, CACHE.discovery, md ? 'markdown' : undefined);
    }
    const c = (Object.values(n.capabilities) as Capability[]).find((x) => x.verb === action);
    if (!c)
      return sendBlocked(reply, 'not-found', `${n.noun} has no capability ${action}; see GET /catalog/${n.noun}`, {
        next: { method: 'GET', path: `/catalog/${n.noun}` },
      });
    if (publishedMode(c) !== 'live')
      return sendBlocked(
        reply,
        'not-found',
        `${c.name} is not live, so it has no page of its own; it is described at GET /catalog/${n.noun} (#${c.verb})`,
        { next: { method: 'GET', path: `/catalog/${n.noun}` } },
      );
    const d = describeCapability(c);
    return sendFace(
      req,
      reply,
      { json: { ...d, mode: 'live' }, doc: capabilityDoc(n, c, d) },
      CACHE.discovery,
      md ? 'markdown' : undefined,
    );
  });
}
