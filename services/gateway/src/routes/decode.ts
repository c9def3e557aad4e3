import type { FastifyInstance } from 'fastify';
import { decodeVin, decodeProvenance } from '@vcs/vin';
import type { GatewayDeps } from '../deps.ts';
import { sendBlocked } from '../reply.ts';

/** GET /decode/{vin}: keyless, offline; what the VIN encodes is real, the rest simulated and labelled so. */
export async function decodeRoutes(app: FastifyInstance, _deps: GatewayDeps) {
  app.get<{ Params: { vin: string } }>('/decode/:vin', async (req, reply) => {
    const r = decodeVin(decodeURIComponent(req.params.vin));
    if (!r.ok) return sendBlocked(reply, 'invalid-vin', `invalid VIN (${r.problem.rule}): ${r.problem.message}`, { ...r.problem });
    return reply.code(200).type('application/json').send({ type: 'OK', decode: r.decode, provenance: decodeProvenance(r), links: { record: `/${r.decode.vin}` } });
  });
}
