import { describe, expect, it } from 'vitest';
import { expectedCheckDigit } from '@vcs/contract';
import { decodeProvenance, decodeVin } from './index.ts';
import { keysMatch, openVpic } from './vpic.ts';
import { agrees, DETAIL_FIELDS, ourValue, VPIC_ANSWERS, type VpicField } from './vpic-answers.ts';

/**
 * Real VINs with vPIC's own answers for them: libs/vin/src/vpic-answers.ts (each entry names its public source, and
 * where vPIC's data changed between the answer and our snapshot, what changed). Below them, year, make and model of
 * more real VINs from corgi's fixtures.
 * - [corgi] github.com/cardog-ai/corgi, test/fixtures.ts (year, make, model per VIN, from Cardog's production data;
 *   the project's test/nhtsa-validation.test.ts checks a sample of them against vPIC's DecodeVinValues). These are
 *   not vPIC's answers as published, so they are kept apart from the measure of detail fields.
 * Four of corgi's fixtures are left out: they name the model in words the vPIC database does not use ("GLC" where
 * its Model table says "GLC-Class", "SC 430" for "SC", "F-150 Lightning" and "Blazer EV" for F-150 and Blazer, the
 * variant being a series there); without vPIC's own API answer for those VINs at hand, they prove nothing.
 */
/** Decode a made-up VIN (a WMI with no pattern for it), its check digit made valid. */
async function decodeMade(raw: string) {
  const r = await decodeVin(raw.slice(0, 8) + expectedCheckDigit(raw) + raw.slice(9));
  if (!r.ok) throw new Error(r.problem.message);
  return r.decode;
}
const norm = (s: unknown) =>
  String(s ?? '')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '');

const yearMakeModel: [string, number, string, string][] = [
  // [corgi] cars, trucks, SUVs, EVs, pre-2010 and recent
  ['1FTFW5L86RFB45612', 2024, 'Ford', 'F-150'],
  ['1FTEX1CM8EFB88051', 2014, 'Ford', 'F-150'],
  ['1FTFW1EF7BFB11754', 2011, 'Ford', 'F-150'],
  ['1FTFW1EV2AFB19783', 2010, 'Ford', 'F-150'],
  ['1FT8W3BT6FEB34730', 2015, 'Ford', 'F-350'],
  ['1FT7W2BT3JEB02011', 2018, 'Ford', 'F-250'],
  ['WBAVL1C5XFVY41004', 2015, 'BMW', 'X1'],
  ['5UXWX9C58F0D45921', 2015, 'BMW', 'X3'],
  ['3GNKBHR47NS184058', 2022, 'Chevrolet', 'Blazer'],
  ['2GKFLTEK4H6343592', 2017, 'GMC', 'Terrain'],
  ['2HKRW2H20NH207506', 2022, 'Honda', 'CR-V'],
  ['5NMS3CAA0LH217545', 2020, 'Hyundai', 'Santa Fe'],
  ['KM8R5DGE3PU560806', 2023, 'Hyundai', 'Palisade'],
  ['1C4PJMCBXKD279503', 2019, 'Jeep', 'Cherokee'],
  ['KNDERCAA9M7182895', 2021, 'Kia', 'Seltos'],
  ['JM3TCBCY6M0454042', 2021, 'Mazda', 'CX-9'],
  ['5N1AT2MVXLC807279', 2020, 'Nissan', 'Rogue'],
  ['1C6SRFETXKN545625', 2019, 'RAM', '1500'],
  ['JF2GTABC3L8272553', 2020, 'Subaru', 'Crosstrek'],
  ['JTNKHMBX1L1083032', 2020, 'Toyota', 'C-HR'],
  ['3VV4B7AX5MM144910', 2021, 'Volkswagen', 'Tiguan'],
  ['WDBTK72F57F202954', 2007, 'Mercedes-Benz', 'CLK-Class'],
  ['4USBU53567LW92799', 2007, 'BMW', 'Z4'],
];

describe('VIN decoding from NHTSA vPIC', () => {
  it.each(VPIC_ANSWERS)(
    'decodes $vin as vPIC does: every field we give that vPIC gives agrees ($src, $kind)',
    async (a) => {
      expect(expectedCheckDigit(a.vin)).toBe(a.vin[8]);
      const r = await decodeVin(a.vin.toLowerCase());
      if (!r.ok) throw new Error(r.problem.message);
      const wrong: string[] = [];
      for (const [f, published] of Object.entries(a.vpic) as [VpicField, string][]) {
        const theirs = a.now?.[f] ?? a.later?.[f] ?? published;
        const ours = ourValue(r.decode, f);
        // Year, make and model are always answered; a detail field we leave out is allowed (never a guess).
        if (ours === undefined && !['ModelYear', 'Make', 'Model'].includes(f)) continue;
        if (!agrees(f, ours, theirs))
          wrong.push(`${f}: ${JSON.stringify(ours)} where vPIC says ${JSON.stringify(theirs)}`);
      }
      expect(wrong, wrong.join('\n')).toEqual([]);
      expect(decodeProvenance(r).source).toMatch(/^NHTSA vPIC snapshot of \d{4}-\d{2}-\d{2} .*@cardog\/corgi \d/);
    },
  );

  it('gives >= 85 % of the detail fields vPIC gives over the corpus, and >= 97 % of those it gives agree', async () => {
    let vpicGives = 0,
      weGive = 0,
      agree = 0,
      ymm = 0,
      ymmAgree = 0;
    const wrong: string[] = [];
    for (const a of VPIC_ANSWERS) {
      const r = await decodeVin(a.vin);
      if (!r.ok) throw new Error(r.problem.message);
      for (const [f, published] of Object.entries(a.vpic) as [VpicField, string][]) {
        // vPIC's value as our snapshot holds it where an older answer differs; a later answer counts as vPIC gave it.
        const theirs = a.now?.[f] ?? published;
        const ours = ourValue(r.decode, f);
        if (!DETAIL_FIELDS.includes(f)) {
          ymm++;
          if (agrees(f, ours, theirs)) ymmAgree++;
          continue;
        }
        vpicGives++;
        if (ours === undefined) continue;
        weGive++;
        if (agrees(f, ours, theirs)) agree++;
        else wrong.push(`${a.vin} ${f}: ${JSON.stringify(ours)} / vPIC ${JSON.stringify(theirs)}`);
      }
    }
    const given = weGive / vpicGives,
      agreement = agree / weGive;
    console.log(
      `vPIC corpus: ${VPIC_ANSWERS.length} VINs; detail fields vPIC gives ${vpicGives}, we give ${weGive} (${(given * 100).toFixed(1)} %), agreeing ${agree} (${(agreement * 100).toFixed(1)} %); year/make/model ${ymmAgree}/${ymm}${wrong.length ? `; differing: ${wrong.join('; ')}` : ''}`,
    );
    expect(given).toBeGreaterThanOrEqual(0.85);
    expect(agreement).toBeGreaterThanOrEqual(0.97);
    expect(ymmAgree / ymm).toBeGreaterThanOrEqual(0.98);
  });

  it("fills engine facts from the engine model's own vPIC patterns where the VIN's give none", async () => {
    // A 2013 Kenworth T680 (made-up serial): its pattern names the PACCAR MX-13; vPIC's EngineModelPattern for it gives
    // the in-line configuration and 380 hp, which no pattern of the VIN gives.
    expect((await decodeMade('1XKYDP9X0DJ000001')).engine).toMatchObject({
      model: 'MX/MX-13',
      configuration: 'In-Line',
      horsepower: 380,
    });
  });

  it(`keeps the model schema's facts the decoder core drops (patterns whose keys are all "*")`, async () => {
    // 1HD1GP4558K319097: Harley-Davidson's 2008 schema gives 2 cylinders and gasoline to every VIN ("*"), as vPIC says.
    const r = await decodeVin('1HD1GP4558K319097');
    if (!r.ok) throw new Error('refused');
    expect(r.decode).toMatchObject({ engine: { cylinders: 2 }, fuel: { primary: 'Gasoline' } });
  });

  it('decodes each VIN against its own keys, whatever was decoded before (one WMI and year, other patterns)', async () => {
    // Both 2024 F-150s, one WMI and year: the Tremor's series must not come from the Lariat's patterns, nor vice versa.
    const lariat = await decodeMade('1FTFW5L86RFB45613');
    const tremor = await decodeMade('1FTFW4L86RFA86623');
    expect([lariat.series, tremor.series]).toEqual(['Lariat', 'Tremor']);
  });

  it('answers the same when decodes are started together as one after another (patterns.ts holds no VIN between calls)', async () => {
    const vpic = await openVpic();
    try {
      const vins = VPIC_ANSWERS.slice(0, 8).map((a) => a.vin);
      const oneByOne = [];
      for (const vin of vins) oneByOne.push(await vpic.decode(vin));
      expect(await Promise.all(vins.map((vin) => vpic.decode(vin)))).toEqual(oneByOne);
    } finally {
      vpic.close();
    }
  });

  it('dates a motorcycle by the 30-year cycle its WMI has vPIC patterns for, not by position 7 (a car rule)', async () => {
    // JH2RC5000LM200053: position 7 is a digit, which for a car means 1980–2009; Honda's motorcycle WMI has schemas
    // in both 1990 and 2020, and the 2020 decode matches (Shadow Aero, VT750C) where the 1990 one does not.
    const r = await decodeVin('JH2RC5000LM200053');
    if (!r.ok) throw new Error('refused');
    expect(r.decode).toMatchObject({
      year: 2020,
      make: 'Honda',
      model: 'Shadow Aero',
      series: 'VT750C',
      vehicleType: 'Motorcycle',
    });
  });

  it('answers year null with a note where neither cycle has vPIC patterns for a motorcycle WMI (never a guess)', async () => {
    // SAY (Norton Motorcycles) has vPIC schemas for 2013 only. Position 10 "A" is 1980 or 2010: neither.
    const d = await decodeMade('SAYAB00A0AA000001');
    expect(d.year).toBeNull();
    expect(d.notes.join(' ')).toMatch(/1980 or 2010.*neither/);
    expect(d).toMatchObject({ vehicleType: 'Motorcycle', manufacturer: 'NORTON MOTORCYCLES UK LTD' });
  });

  it('names a make from the WMI only when vPIC ties the WMI to one (JF1 is Subaru and Toyota: the manufacturer decides)', async () => {
    // A JF1 VIN no model pattern matches: the make must not be picked arbitrarily from JF1's two makes.
    expect(await decodeMade('JF1ZZZZZ0D1000001')).toMatchObject({
      year: 2013,
      make: 'Subaru',
      model: null,
      manufacturer: 'SUBARU CORPORATION',
    });
  });

  it('matches pattern keys as vPIC does (positions 4–8 | 10–17, * any, [..] sets and ranges)', () => {
    expect(keysMatch('CM82[67]', '1HGCM82633A004352')).toBe(true);
    expect(keysMatch('CM82[0-5]', '1HGCM82633A004352')).toBe(false);
    expect(keysMatch('*****|*A', '1HGCM82633A004352')).toBe(true);
    expect(keysMatch('*****|*B', '1HGCM82633A004352')).toBe(false);
    expect(keysMatch('CM8*6|3', '1HGCM82633A004352')).toBe(true);
  });

  it('agrees with vPIC on year, make and model for every VIN of the set', async () => {
    const wrong: string[] = [];
    for (const [vin, year, make, model] of yearMakeModel) {
      const r = await decodeVin(vin);
      if (!r.ok) {
        wrong.push(`${vin}: refused (${r.problem.message})`);
        continue;
      }
      const got = [r.decode.year, norm(r.decode.make), norm(r.decode.model)];
      if (got[0] !== year || got[1] !== norm(make) || got[2] !== norm(model))
        wrong.push(`${vin}: ${JSON.stringify(got)} ≠ ${year} ${make} ${model}`);
    }
    expect(wrong, wrong.join('\n')).toEqual([]);
  });

  it('refuses a VIN that breaks a rule, naming it (a wrong check digit names the expected one)', async () => {
    expect(await decodeVin('1HGCM82633A00435')).toMatchObject({ ok: false, problem: { rule: 'length' } });
    expect(await decodeVin('1HGCM82633A0O4352')).toMatchObject({
      ok: false,
      problem: { rule: 'forbidden-character', position: 13 },
    });
    expect(await decodeVin('1HGCM82643A004352')).toMatchObject({
      ok: false,
      problem: { rule: 'check-digit', expected: '3', found: '4' },
    });
  });

  it('is deterministic, simulates only what no public source gives, and says so', async () => {
    const a = await decodeVin('1HGCM82633A004352');
    if (!a.ok) throw new Error('bad');
    expect(await decodeVin('1HGCM82633A004352')).toEqual(a);
    expect(a.decode.odometer.simulated).toBe(true);
    expect(a.simulated).toEqual(['retailValue', 'msrp', 'odometer']);
    expect(a.real).toEqual(expect.arrayContaining(['year', 'make', 'model', 'trim', 'body', 'engine']));
    expect(a.real).not.toContain('msrp');
  });
});
