import { capabilityByName, type DecodeRecord, type DecodeSources } from '@vcs/contract';
import type { GatewayDeps } from './deps.ts';
import { anonymousContext, answerOf } from '@vcs/platform';
import { dispatch } from './dispatch.ts';

const DECODE = capabilityByName('vehicle.decode')!;

export type Decoded =
  | { ok: true; decode: Record<string, any>; provenance: Record<string, unknown> }
  | { ok: false; status: number; body: Uint8Array | object };

/** vehicle.decode's OK answer as the data pillar sends it (contract vehicle.ts); any other answer is passed on. */
type DecodeOk = { type: 'OK'; value: { decode: DecodeRecord; sources: DecodeSources } };
const isDecodeOk = (answer: Record<string, unknown>): answer is DecodeOk => answer?.type === 'OK';

/**
 * Decode a VIN by asking the data pillar over the bus, as vehicle.decode does: the gateway holds no vehicle
 * database (vPIC lives in the data pillar, which an operator scales by adding replicas). The keyless faces — GET
 * /decode/{vin}, the record, its lenses and MCP fetch — all ask here, so one VIN tells one story everywhere.
 */
export async function decodeThroughData(deps: GatewayDeps, vin: string, requestId: string): Promise<Decoded> {
  const r = await dispatch(deps.bus, DECODE, { vin }, anonymousContext(requestId), deps.config.busTimeoutMs);
  const answer = answerOf(r);
  if (r.status !== 200 || !isDecodeOk(answer)) return { ok: false, status: r.status, body: r.body };
  return {
    ok: true,
    decode: answer.value.decode,
    provenance: { simulated: true, environment: 'sandbox', ...answer.value.sources },
  };
}
