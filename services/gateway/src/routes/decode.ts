import type { FastifyInstance } from 'fastify';
import { normaliseVin, vinProblem } from '@vcs/contract';
import { decodeThroughData, type DecodedOk } from '../decode.ts';
import type { GatewayDeps } from '../deps.ts';
import { sendBlocked } from '../reply.ts';

/** The face's JSON, written once per decode this gateway keeps (decode.ts): a warm VIN is answered by its bytes. */
const bodyOf = (r: DecodedOk) =>
  (r.faceJson ??= JSON.stringify({
    type: 'OK',
    decode: r.decode,
    provenance: r.provenance,
    links: { record: `/${r.decode.vin}` },
  }));

/**
 * GET /decode/{vin}: keyless; the data pillar decodes from NHTSA vPIC; values vPIC does not give are simulated and
 * labelled.
 */
export async function decodeRoutes(app: FastifyInstance, deps: GatewayDeps) {
  app.get<{ Params: { vin: string } }>('/decode/:vin', async (req, reply) => {
    // A VIN that breaks a rule is answered here, naming the rule (and the expected check digit), before any bus call.
    const vin = normaliseVin(req.params.vin); // the segment is decoded once, by fastify
    const problem = vinProblem(vin);
    if (problem)
      return sendBlocked(reply, 'invalid-vin', `invalid VIN (${problem.rule}): ${problem.message}`, { ...problem });
    const r = await decodeThroughData(deps, vin, req.id);
    if (!r.ok)
      return reply
        .code(r.status)
        .type('application/json')
        .send(r.body instanceof Uint8Array ? Buffer.from(r.body) : r.body);
    return reply.code(200).type('application/json').send(bodyOf(r));
  });
}
