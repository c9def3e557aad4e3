import type { FastifyInstance } from 'fastify';
import { nouns, type Noun } from '@vcs/contract';
import type { GatewayDeps } from '../deps.ts';
import { landingFace, lensFace } from '../faces/door.ts';
import { dealsFor, factsFor } from '../faces/facts.ts';
import { publishedMode } from '../faces/modes.ts';
import { CACHE, sendFace } from '../faces/negotiate.ts';
import { decodeOf, lensData } from '../faces/record.ts';
import { vinFromPath } from '../faces/vin-param.ts';

/**
 * Every noun's door: the landing `/<door>` and the VIN lens `/<door>/<vin>`. Capability routes on the same
 * door are static and win over the lens; a segment that is not a VIN answers a typed 404.
 */
export async function doorRoutes(app: FastifyInstance, deps: GatewayDeps) {
  for (const noun of nouns) {
    const n = noun as Noun<any>;
    if (!app.hasRoute({ method: 'GET', url: `/${n.door}` })) {
      app.get(`/${n.door}`, async (req, reply) => sendFace(req, reply, landingFace(n, publishedMode), CACHE.discovery));
    }
    if (!app.hasRoute({ method: 'GET', url: `/${n.door}/:vin` })) {
      app.get<{ Params: { vin: string } }>(`/${n.door}/:vin`, async (req, reply) => {
        const vin = vinFromPath(req.params.vin, reply, `GET /${n.door}/${req.params.vin}`);
        if (!vin) return reply;
        const [facts, deals, decoded] = await Promise.all([
          factsFor(deps.db, vin, n.noun),
          n.noun === 'deal' ? dealsFor(deps, vin, req.id) : Promise.resolve([]),
          n.noun === 'vehicle' ? decodeOf(deps, vin, req.id) : Promise.resolve(null),
        ]);
        return sendFace(req, reply, lensFace(n, lensData(n, vin, facts, deals, decoded?.decode ?? null)), CACHE.record);
      });
    }
  }
}
