import type { FastifyInstance } from 'fastify';
import { capabilities, describeCapability, nouns, type Capability, type Noun } from '@vcs/contract';
import type { GatewayDeps } from '../../deps.ts';
import { capabilityDoc, catalogDoc, catalogJson, nounDoc, triggersDoc } from '../../faces/catalog-face.ts';
import { publishedMode } from '../../faces/modes.ts';
import { CACHE, sendFace } from '../../faces/negotiate.ts';
import { CATALOG, sendBlocked } from '../../reply.ts';

const triggersJson = () => ({ triggers: Object.fromEntries(capabilities.map((c) => [c.name, c.triggers])) });

/** GET / and /catalog (the same face), /catalog/<noun>, /catalog/<noun>.<action> (live capabilities); `.md` gives Markdown. */
export async function catalogRoutes(app: FastifyInstance, _deps: GatewayDeps) {
  const whole = () => ({ json: catalogJson(), doc: catalogDoc() });
  app.get('/catalog', async (req, reply) => sendFace(req, reply, whole(), CACHE.discovery));
  // The service's front door is its catalog: a browser opening the bare address reads what is here and where.
  app.get('/', async (req, reply) => sendFace(req, reply, whole(), CACHE.discovery));
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
