import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../deps.ts';
import { CACHE, sendFace } from '../faces/negotiate.ts';
import { recordData, recordFace } from '../faces/record.ts';
import { vinFromPath } from '../faces/vin-param.ts';

/**
 * GET /{vin}: the record, in JSON, Markdown or HTML by Accept. Static routes (/catalog, /llms.txt...) win over this
 * one.
 */
export async function recordRoutes(app: FastifyInstance, deps: GatewayDeps) {
  app.get<{ Params: { vin: string } }>('/:vin', async (req, reply) => {
    const vin = vinFromPath(req.params.vin, reply, `GET /${req.params.vin}`);
    if (!vin) return reply;
    return sendFace(req, reply, recordFace(await recordData(deps, vin, req.id)), CACHE.record);
  });
}
