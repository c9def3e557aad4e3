/**
 * The pattern step of a vPIC decode, on our queries: which patterns of the schemas vPIC links to a VIN's WMI and model
 * year match the VIN, each value resolved in its lookup table, ranked best first per element.
 *
 * Our SQL, against the slim copy vpic.ts builds (its one-row-per-schema VinSchemaYears, its indexes), narrowed in SQL
 * to the patterns whose keys match the VIN as vPIC matches them (spVinDecode: the VIN's keys — positions 4–8, "|",
 * 10–17 — `LIKE` the pattern's, "*" one character, "[…]" a set or range; written as SQLite's GLOB, whose "?" is vPIC's
 * "*" and whose sets and ranges are vPIC's, with a trailing "*" for vPIC's prefix match).
 *
 * The ranking (the confidence score, the order of an element's candidates, which are kept) is @cardog/corgi 2.0.1's
 * decoder core's (ISC licence, CRDG), restated: every answer in libs/vin's tests was measured with it, and
 * docs/decisions.md says why it lives here rather than behind that core.
 */

/** One matching pattern, as a decode hands it on (the shape corgi's core gave, so answers are unchanged). */
export interface PatternMatch {
  element: string;
  code: string;
  attributeId: string | null;
  value: string | null;
  confidence: number;
  positions: number[];
  schema: string;
  metadata: {
    lookupTable: string | null;
    groupName: string;
    elementWeight: number;
    patternType: 'VDS' | 'VIS';
    rawPattern: string;
  };
}

/** What the pattern step answers for a VIN and year: its patterns (none: absent), and notes. */
export interface PatternDecode {
  patterns?: PatternMatch[];
  errors: { code: string; message: string; details?: string }[];
}

/** Rows of a query, as objects by column name. */
export type Query = (sql: string, params: (string | number)[]) => Record<string, unknown>[];

/** Lookup tables whose values are resolved; a pattern pointing at another lookup table is not used. */
const LOOKUPS = new Set([
  'DriveType',
  'EngineModel',
  'EngineConfiguration',
  'FuelType',
  'Transmission',
  'BodyStyle',
  'GrossVehicleWeightRating',
  'GrossVehicleWeightRatingTo',
  'GrossVehicleWeightRatingFrom',
  'ChargerLevel',
  'ElectrificationLevel',
  'EVDriveUnit',
  'BatteryType',
  'Make',
  'Model',
  'Series',
  'Trim',
  'Turbo',
  'DaytimeRunningLight',
  'Plant',
  'Country',
  'DestinationMarket',
  'Conversion',
]);

/** A VIN's pattern keys as vPIC writes them. */
export const keysOf = (vin: string) => `${vin.slice(3, 8)}|${vin.slice(9)}`;

/** The pattern query: both halves narrowed to the patterns whose keys match (the first parameter: the VIN's keys). */
const patternSql = (ids: string) => `
  WITH ValidSchemas AS (SELECT vs.Id, vs.Name FROM VinSchema vs WHERE vs.Id IN (${ids}))
  SELECT DISTINCT p.Keys AS Pattern, e.Id AS ElementId, e.Name AS ElementName, e.Code AS ElementCode, e.GroupName,
    e.LookupTable, p.AttributeId, vs.Name AS SchemaName, wvs.YearFrom, wvs.YearTo, e.weight AS ElementWeight
  FROM Pattern p JOIN Element e ON p.ElementId = e.Id JOIN ValidSchemas vs ON p.VinSchemaId = vs.Id
    JOIN VinSchemaYears wvs ON p.VinSchemaId = wvs.VinSchemaId
  WHERE (?1 GLOB replace(p.Keys, '*', '?') || '*') AND p.VinSchemaId IN (${ids})
  UNION ALL
  SELECT p.Keys AS Pattern, (SELECT Id FROM Element WHERE Name = 'Make' LIMIT 1) AS ElementId, 'Make' AS ElementName,
    'MK' AS ElementCode, 'Vehicle' AS GroupName, NULL AS LookupTable, m.Name AS AttributeId, vs.Name AS SchemaName,
    wvs.YearFrom, wvs.YearTo,
    (SELECT weight FROM Element WHERE Name = 'Make' LIMIT 1) AS ElementWeight
  FROM Pattern p JOIN Element e ON p.ElementId = e.Id JOIN ValidSchemas vs ON p.VinSchemaId = vs.Id
    JOIN VinSchemaYears wvs ON p.VinSchemaId = wvs.VinSchemaId
    JOIN Make_Model mm ON mm.ModelId = CAST(p.AttributeId AS INTEGER) JOIN Make m ON m.Id = mm.MakeId
  WHERE e.Name = 'Model' AND (?1 GLOB replace(p.Keys, '*', '?') || '*') AND p.VinSchemaId IN (${ids})`;

/** A pattern row as patternSql selects it (a type, not an interface, so a query's plain rows can be read as it). */
type Row = {
  Pattern: string;
  ElementId: number;
  ElementName: string;
  ElementCode: string;
  GroupName: string;
  LookupTable: string | null;
  AttributeId: unknown;
  SchemaName: string;
  ElementWeight: number;
  value?: unknown;
};

function inRange(c: string, set: string): boolean {
  if (!set.startsWith('[') || !set.endsWith(']')) return c === set || set === '*';
  const s = set.slice(1, -1);
  for (let i = 0; i < s.length;) {
    if (i + 2 < s.length && s[i + 1] === '-') {
      if (c >= s[i]! && c <= s[i + 2]!) return true;
      i += 3;
    } else {
      if (c === s[i]) return true;
      i++;
    }
  }
  return false;
}

/** The core's match of a pattern's VDS part against six characters from position 4 ("*" at the end: any rest). */
function matchesSimple(chars: string, pattern: string): boolean {
  let i = 0,
    k = 0;
  while (i < pattern.length && k < chars.length) {
    const c = pattern[i]!;
    if (c === '[') {
      const end = pattern.indexOf(']', i);
      if (end === -1 || !inRange(chars[k]!, pattern.slice(i, end + 1))) return false;
      i = end + 1;
      k++;
    } else if (c === '*') {
      if (i === pattern.length - 1) return true;
      i++;
      k++;
    } else if (chars[k] !== c) return false;
    else {
      i++;
      k++;
    }
  }
  return i >= pattern.length || (i === pattern.length - 1 && pattern[i] === '*');
}

/**
 * The core's confidence in a pattern (0–1): literal characters score 1, ranges 0.7, sets 0.8, "*" 0.5, averaged; a
 * "VDS|VIS" pattern scores on one VIS character alone. `chars` is what the core compared (see `match`).
 */
function confidence(pattern: string, chars: string): number {
  if (!pattern || !chars) return 0;
  const [vds, ...vis] = pattern.split('|') as [string, ...string[]];
  if (vis.length > 0 && vds.length === 5) {
    const c = vis[0]![1];
    return c === '*' ? 0.8 : c === chars ? 1 : 0;
  }
  if (!matchesSimple(chars, vds)) return 0;
  let literal = 0,
    sets = 0,
    stars = 0,
    n = 0;
  for (let i = 0, k = 0; i < vds.length && k < chars.length;) {
    const c = vds[i]!;
    if (c === '[') {
      const end = vds.indexOf(']', i);
      if (end === -1) break;
      sets += vds.slice(i + 1, end).includes('-') ? 0.7 : 0.8;
      n++;
      i = end + 1;
      k++;
    } else if (c === '*') {
      stars++;
      n++;
      i++;
      k++;
    } else {
      if (c === chars[k]) literal++;
      n++;
      i++;
      k++;
    }
  }
  return Math.min(1, Math.max(0, (literal + sets + stars * 0.5) / n));
}

/** The pattern step for one VIN and model year (the VIN of VIN characters, its WMI known to vPIC). */
export function matchPatterns(query: Query, vin: string, wmi: string, year: number): PatternDecode {
  const schemas = query(
    `SELECT DISTINCT vs.Id AS id, vs.Name AS name
    FROM Wmi w JOIN Wmi_VinSchema wvs ON w.Id = wvs.WmiId JOIN VinSchema vs ON wvs.VinSchemaId = vs.Id
    WHERE w.Wmi = ? AND ? >= wvs.YearFrom AND (wvs.YearTo IS NULL OR ? <= wvs.YearTo)`,
    [wmi, year, year],
  );
  const patterns = schemas.length ? ranked(query, vin, schemas.map((s) => Number(s.id)).join(',')) : [];
  if (!patterns.length) return { errors: [{ code: '400', message: 'No matching patterns found' }] };
  const mean = patterns.reduce((a, p) => a + p.confidence, 0) / patterns.length;
  return { patterns, errors: mean < 0.5 ? [{ code: '401', message: 'Low confidence in pattern matches' }] : [] };
}

function ranked(query: Query, vin: string, ids: string): PatternMatch[] {
  const rows = (query(patternSql(ids), [keysOf(vin)]) as Row[]).filter(
    (r) => !(r.LookupTable && (!LOOKUPS.has(r.LookupTable) || r.LookupTable.includes('vNCSA'))),
  );
  // Values: as they stand, or resolved in their lookup table (an id the table lacks stays as it is).
  const plain: Row[] = [];
  const byTable = new Map<string, Row[]>();
  for (const r of rows) {
    if (!r.LookupTable) {
      r.value = r.AttributeId;
      plain.push(r);
    } else (byTable.get(r.LookupTable) ?? byTable.set(r.LookupTable, []).get(r.LookupTable)!).push(r);
  }
  for (const [table, list] of byTable) {
    const ids = [...new Set(list.map((r) => String(r.AttributeId)))];
    const names = new Map<string, unknown>();
    try {
      for (const n of query(
        `SELECT CAST(Id AS TEXT) AS Id, Name FROM ${table} WHERE CAST(Id AS TEXT) IN (${ids.map(() => '?').join(',')})`,
        ids,
      ))
        names.set(String(n.Id), n.Name);
    } catch {
      /* a table the file lacks: values stay ids */
    }
    for (const r of list) r.value = names.get(String(r.AttributeId)) || r.AttributeId;
  }
  const all = [...plain, ...[...byTable.values()].flat()];
  all.sort((a, b) =>
    a.ElementWeight !== b.ElementWeight ? b.ElementWeight - a.ElementWeight : a.Pattern.localeCompare(b.Pattern),
  );
  // What the core compared: positions 4–9 and 10–17 for a pattern without "|", position 11 for one with it.
  const vds = vin.substring(3, 9),
    vis = vin.substring(9, 17);
  const models = all
    .filter((r) => r.ElementName === 'Model')
    .map((r) => ({ r, c: confidence(r.Pattern, vds + vis) }))
    .sort((a, b) => b.c - a.c);
  const modelSchema = models.length ? models[0]!.r.SchemaName : null;
  const matches: PatternMatch[] = [];
  for (const r of all) {
    const hasVis = r.Pattern.includes('|');
    let c = hasVis ? confidence(r.Pattern, vis[1]!) : confidence(r.Pattern, vds + vis);
    const plant = r.ElementName.toLowerCase().includes('plant');
    // Plant patterns count only from the model's schema (none named: at half weight).
    if (plant) c = modelSchema ? (r.SchemaName === modelSchema ? c : 0) : c * 0.5;
    if (!(plant ? c > 0.3 : c > 0.5)) continue;
    const head = r.Pattern.split('|')[0]!;
    const value = r.value ? String(r.value) : null;
    matches.push({
      element: r.ElementName,
      code: r.ElementCode,
      attributeId: value,
      value,
      confidence: c,
      positions: [...head].flatMap((ch, i) => (ch !== '|' ? [(hasVis ? 9 : 3) + i] : [])),
      schema: r.SchemaName,
      metadata: {
        lookupTable: r.LookupTable,
        groupName: r.GroupName,
        elementWeight: r.ElementWeight,
        patternType: hasVis ? 'VIS' : 'VDS',
        rawPattern: r.Pattern,
      },
    });
  }
  // Per element (in order of first appearance): heavier first, then the schema with more of the VIN's other
  // patterns, then the higher confidence; one of each value, positions and schema.
  const perSchema = new Map<string, number>();
  for (const m of matches) if (m.element !== 'Model') perSchema.set(m.schema, (perSchema.get(m.schema) ?? 0) + 1);
  const byElement = new Map<string, PatternMatch[]>();
  for (const m of matches) (byElement.get(m.element) ?? byElement.set(m.element, []).get(m.element)!).push(m);
  const out: PatternMatch[] = [];
  for (const list of byElement.values()) {
    list.sort((a, b) => {
      const wa = a.metadata.elementWeight ?? 0,
        wb = b.metadata.elementWeight ?? 0;
      if (wa !== wb) return wb - wa;
      const sa = perSchema.get(a.schema) ?? 0,
        sb = perSchema.get(b.schema) ?? 0;
      return sa !== sb ? sb - sa : b.confidence - a.confidence;
    });
    const seen = new Set<string>();
    for (const m of list) {
      const key = JSON.stringify({ value: m.value, positions: m.positions.join(','), schema: m.schema });
      if (!seen.has(key)) {
        seen.add(key);
        out.push(m);
      }
    }
  }
  return out;
}
