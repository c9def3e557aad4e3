import { LRUCache } from 'lru-cache';
import { capabilityByName, type DecodeRecord, type DecodeSources } from '@vcs/contract';
import type { GatewayDeps } from './deps.ts';
import { anonymousContext, answerOf } from '@vcs/platform';
import { dispatch } from './dispatch.ts';

const DECODE = capabilityByName('vehicle.decode')!;

export type DecodedOk = {
  ok: true;
  decode: Record<string, any>;
  provenance: Record<string, unknown>;
  /** GET /decode's JSON for this decode, written the first time that face answers it (routes/decode.ts). */
  faceJson?: string;
};
export type Decoded = DecodedOk | { ok: false; status: number; body: Uint8Array | object };

/** vehicle.decode's OK answer as the data pillar sends it (contract vehicle.ts); any other answer is passed on. */
type DecodeOk = { type: 'OK'; value: { decode: DecodeRecord; sources: DecodeSources } };
const isDecodeOk = (answer: Record<string, unknown>): answer is DecodeOk => answer?.type === 'OK';

/**
 * The decodes this gateway was last given, by VIN. A decode is a function of the VIN and the data pillar's vPIC
 * snapshot alone (its simulated values too), so a VIN asked again is answered without the bus round trip, the
 * envelope and its JSON twice over — most of a warm GET /decode's cost. Bounded in count (about 4 KB each) and in
 * age, so a data pillar deployed with a newer snapshot is heard within DECODE_CACHE.ttl. Refusals and outages are
 * never kept. One cache per gateway instance: buildApp makes it (deps.decodes).
 */
export const DECODE_CACHE = { max: 1_000, ttl: 10 * 60_000 };
export type DecodeCache = LRUCache<string, DecodedOk>;
export const newDecodeCache = (): DecodeCache => new LRUCache<string, DecodedOk>(DECODE_CACHE);

/**
 * Decode a VIN by asking the data pillar over the bus, as vehicle.decode does: the gateway holds no vehicle
 * database (vPIC lives in the data pillar, which an operator scales by adding replicas). The keyless faces — GET
 * /decode/{vin}, the record, its lenses and MCP fetch — all ask here, so one VIN tells one story everywhere.
 * The answer is shared: callers read it, never change it.
 */
export async function decodeThroughData(deps: GatewayDeps, vin: string, requestId: string): Promise<Decoded> {
  const cache = deps.decodes;
  const known = cache.get(vin);
  if (known) return known;
  const r = await dispatch(deps.bus, DECODE, { vin }, anonymousContext(requestId), deps.config.busTimeoutMs);
  const answer = answerOf(r);
  if (r.status !== 200 || !isDecodeOk(answer)) return { ok: false, status: r.status, body: r.body };
  const decoded: DecodedOk = {
    ok: true,
    decode: answer.value.decode,
    provenance: { simulated: true, environment: 'sandbox', ...answer.value.sources },
  };
  cache.set(vin, decoded);
  return decoded;
}
