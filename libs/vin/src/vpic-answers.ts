/**
 * Real VINs with the answers NHTSA's vPIC API gave for them, as published in public sources (found with the search
 * tools; each entry names its source). Field names and values are vPIC's own (DecodeVinValues' flat names; a DecodeVin
 * answer's variables are written under the same names). Only the fields the measure judges are kept, and only where vPIC
 * gave a value: a field absent here is one vPIC left empty (or the source did not show).
 *
 * vPIC's data changes between snapshots and the answers were taken on different days; this service decodes from the
 * snapshot of 2026-02-17. Where an answer taken before that differs from what the snapshot now holds, `now` gives the
 * snapshot's value and `why` says what changed (the measure compares against `now`). An answer taken after the
 * snapshot that differs is left as vPIC gave it and counts against us in the measure; `later` records what the
 * snapshot holds instead.
 *
 * Sources:
 * - [capture] vPIC's DecodeVinValues answer for 1HGCM82633A004352, relayed in full (`rawDecodedValues`) in an HTTP
 *   capture in a public GitHub repository (find_string `"PlantCity":"MARYSVILLE"`, file id 70925027258); the same
 *   answer is the sample response in APIVerve's VIN decoder README (file id 33260395278).
 * - [pete] github.com/PeteCarrott/vinDecode, sampleData.md: vPIC's DecodeVin answers pasted in July 2018. Commit
 *   3658d9c for 5YJSA1H12FFP71790, 1HD1GP4558K319097, SCFEBBELXDGD17560, 1FV3GFBC0YHA74039, JH4KA2650HC000268;
 *   commit a01db5f (the raw DecodeVin JSON) for JF1GPAD60D1803590; commit dae1523, its first entry, for
 *   1C3CCBBB6DN695936 (later entries of that version carry another VIN's values, a bug its commit 5b4c721 fixed:
 *   not used).
 * - [peckham] github.com/davidpeckham/vpic-api, tests/test_decode/decode-vin.json (commit bc9fc1d, May 2021): a
 *   recorded DecodeVinValues response for 1FTMW1T88MFA00001.
 * - [camden] Raymond Camden's post "Decoding VINs with an API" (2026-06-26, in his blog's GitHub repository; file id
 *   54608435646): the DecodeVinValues answer for his own car, 3VV3B7AXXNM077525.
 * - [verifik] Verifik's API documentation (a vPIC-derived answer, 2023-04-21, vPIC's variable names; file id
 *   35870109950): 2HNYD18233H552413.
 * - [ioniq] a Swift app's sample record keeping vPIC's raw DecodeVinValues answer (`raw_vpic`, 2026-01-23; file id
 *   70294157697): KMHC85LCXHU026758.
 * - [sendadf] carmelosantana/send-adf's example (file id 13599304755): a DecodeVinValues answer, empty values
 *   dropped, for 1B3BR65EXSV201546.
 * - [webmock] a Ruby CLI's webmock responses "copied from the actual vPIC API" (file id 35092002051): DecodeVin for
 *   3AKJHHDR3KSKX6689, only make, model and body class kept there.
 * - [actor] live checks of an Apify actor relaying vPIC's decodes (2026-09-30, after our snapshot; file ids
 *   71467239000, 70904779435): 3VWFE21C04M000001 in full (its cylinders are left out: the actor drops them, null for
 *   the Accord too, where vPIC says 6) and the year, make and model of WBAVB13506PT12345.
 * - [enrich] an insurance-quote service's README, a document's vehicle "enriched with NHTSA" (file id 9884045035):
 *   5YJSA1E14FF087599.
 * - [corgi#22], [corgi#32] github.com/cardog-ai/corgi issues 22 and 32: NHTSA decodes 1FTFW5L86RFB45612 (2024) and
 *   1FTFW4L86RFA86622 as a Ford F-150.
 * - [audit] the audit of this service's decode: vPIC answers 2020 Honda motorcycles for JH2RC5000LM200053 and
 *   JH2SC5907LK100001 (this service had answered 1990).
 */
export type VpicField =
  | 'ModelYear'
  | 'Make'
  | 'Model'
  | 'Series'
  | 'Trim'
  | 'BodyClass'
  | 'Doors'
  | 'FuelTypePrimary'
  | 'EngineCylinders'
  | 'DisplacementL'
  | 'EngineModel'
  | 'EngineConfiguration'
  | 'PlantCity'
  | 'PlantState'
  | 'PlantCountry'
  | 'VehicleType'
  | 'GVWR';

export interface VpicAnswer {
  vin: string;
  src: string;
  kind: 'car' | 'mpv' | 'truck' | 'motorcycle' | 'ev' | 'hybrid' | 'incomplete';
  vpic: Partial<Record<VpicField, string>>;
  /** The 2026-02-17 snapshot's value where an older published answer differs (see `why`): the measure uses it. */
  now?: Partial<Record<VpicField, string>>;
  /** The snapshot's value where an answer taken after it differs (see `why`): the measure counts vPIC's answer. */
  later?: Partial<Record<VpicField, string>>;
  why?: string;
}

export const VPIC_ANSWERS: VpicAnswer[] = [
  {
    vin: '1HGCM82633A004352',
    src: 'capture',
    kind: 'car',
    vpic: {
      ModelYear: '2003',
      Make: 'HONDA',
      Model: 'Accord',
      Trim: 'EX-V6',
      BodyClass: 'Coupe',
      Doors: '2',
      FuelTypePrimary: 'Gasoline',
      EngineCylinders: '6',
      DisplacementL: '2.998832712',
      EngineModel: 'J30A4',
      EngineConfiguration: 'V-Shaped',
      PlantCity: 'MARYSVILLE',
      PlantState: 'OHIO',
      PlantCountry: 'UNITED STATES (USA)',
      VehicleType: 'PASSENGER CAR',
      GVWR: 'Class 1C: 4,001 - 5,000 lb (1,814 - 2,268 kg)',
    },
  },
  {
    vin: '5YJSA1H12FFP71790',
    src: 'pete',
    kind: 'ev',
    vpic: {
      ModelYear: '2015',
      Make: 'TESLA',
      Model: 'Model S',
      PlantCity: 'Fremont',
      PlantState: 'California',
      PlantCountry: 'United States (USA)',
      VehicleType: 'PASSENGER CAR',
      BodyClass: 'Hatchback/Liftback/Notchback',
      Doors: '5',
      EngineModel: '3 Phase A/C Induction (Single Motor)',
      FuelTypePrimary: 'Electric',
    },
  },
  {
    vin: '1HD1GP4558K319097',
    src: 'pete',
    kind: 'motorcycle',
    vpic: {
      ModelYear: '2008',
      Make: 'HARLEY DAVIDSON',
      Model: 'Dyna Wide Glide 105th Anniversary',
      Series: 'FXDWG ANV',
      PlantCity: 'Kansas City',
      PlantState: 'Missouri',
      PlantCountry: 'United States (USA)',
      VehicleType: 'MOTORCYCLE',
      BodyClass: 'Motorcycle - Custom',
      EngineCylinders: '2',
      DisplacementL: '1.584000',
      EngineModel: 'Twin CAM 96 V-2',
      FuelTypePrimary: 'Gasoline',
    },
    now: { Model: 'Dyna Wide Glide', Series: 'FXDWG,105th Anniversary' },
    why: 'the 2026-02-17 snapshot names the model "Dyna Wide Glide" and writes the series "FXDWG,105th Anniversary"',
  },
  {
    vin: 'SCFEBBELXDGD17560',
    src: 'pete',
    kind: 'car',
    vpic: {
      ModelYear: '2013',
      Make: 'ASTON MARTIN',
      Model: 'V8 Vantage',
      Series: 'VH2',
      Trim: 'S',
      PlantCity: 'Gaydon',
      PlantCountry: 'United Kingdom (UK)',
      VehicleType: 'PASSENGER CAR',
      BodyClass: 'Cabriolet/Convertible',
      Doors: '2',
      EngineCylinders: '8',
      DisplacementL: '4.7',
      EngineModel: 'AM15',
      EngineConfiguration: 'V-Shaped',
    },
    now: { BodyClass: 'Convertible/Cabriolet' },
    why: 'vPIC has since renamed the body class "Cabriolet/Convertible" to "Convertible/Cabriolet"',
  },
  {
    vin: '1FV3GFBC0YHA74039',
    src: 'pete',
    kind: 'incomplete',
    vpic: {
      ModelYear: '2000',
      Make: 'FREIGHTLINER',
      Model: 'FL60',
      PlantCity: 'Mt. Holly',
      PlantState: 'North Carolina',
      PlantCountry: 'United States (USA)',
      VehicleType: 'INCOMPLETE VEHICLE',
      BodyClass: 'Truck',
      GVWR: 'Class 6: 19,501 - 26,000 lb (8,845 - 11,794 kg)',
      DisplacementL: '5.9',
      EngineModel: 'BT5.9/ISB',
      FuelTypePrimary: 'Diesel',
    },
  },
  {
    vin: 'JH4KA2650HC000268',
    src: 'pete',
    kind: 'car',
    vpic: {
      ModelYear: '1987',
      Make: 'ACURA',
      Model: 'Legend',
      PlantCity: 'Saitama',
      PlantState: 'Sayama',
      PlantCountry: 'Japan',
      Trim: 'L',
      VehicleType: 'PASSENGER CAR',
      BodyClass: 'Sedan/Saloon',
      Doors: '4',
      EngineCylinders: '6',
      DisplacementL: '2.5000000',
      EngineModel: 'C25A1',
      EngineConfiguration: 'V-Shaped',
    },
    now: { PlantState: 'SAITAMA' },
    why:
      "the snapshot's 1987 Legend schema has plant state SAITAMA and no city " +
      '(the 2018 answer: state Sayama, city Saitama; Sayama is now the city in the 1987 Integra schema)',
  },
  {
    vin: 'JF1GPAD60D1803590',
    src: 'pete',
    kind: 'car',
    vpic: {
      ModelYear: '2013',
      Make: 'SUBARU',
      Model: 'Impreza',
      DisplacementL: '2.0',
      PlantCity: 'Ota',
      PlantState: 'Gunma',
      PlantCountry: 'Japan',
      Trim: 'Prm Plus+S/R',
      VehicleType: 'PASSENGER CAR',
      BodyClass: 'Wagon',
    },
  },
  {
    vin: '1C3CCBBB6DN695936',
    src: 'pete',
    kind: 'car',
    vpic: {
      ModelYear: '2013',
      Make: 'CHRYSLER',
      Model: '200',
      Trim: 'Touring',
      VehicleType: 'PASSENGER CAR',
      BodyClass: 'Sedan/Saloon',
      Doors: '4',
      EngineCylinders: '4',
      DisplacementL: '2.4',
      FuelTypePrimary: 'Gasoline',
    },
  },
  {
    vin: '1FTMW1T88MFA00001',
    src: 'peckham',
    kind: 'truck',
    vpic: {
      ModelYear: '2021',
      Make: 'FORD',
      Model: 'F-150',
      Series: 'F-Series',
      Trim: 'SuperCrew-SSV',
      BodyClass: 'Pickup',
      DisplacementL: '3.5',
      EngineConfiguration: 'V-Shaped',
      EngineCylinders: '6',
      EngineModel: 'GTDI',
      FuelTypePrimary: 'Gasoline',
      GVWR: 'Class 2E: 6,001 - 7,000 lb (2,722 - 3,175 kg)',
      PlantCity: 'DEARBORN',
      PlantState: 'MICHIGAN',
      PlantCountry: 'UNITED STATES (USA)',
      VehicleType: 'TRUCK',
    },
  },
  {
    vin: '3VV3B7AXXNM077525',
    src: 'camden',
    kind: 'mpv',
    vpic: {
      ModelYear: '2022',
      Make: 'VOLKSWAGEN',
      Model: 'Tiguan',
      Trim: 'SE',
      BodyClass: 'Sport Utility Vehicle [SUV]/Multipurpose Vehicle [MPV]',
      DisplacementL: '2.0',
      EngineCylinders: '4',
      FuelTypePrimary: 'Gasoline',
      GVWR: 'Class 1D: 5,001 - 6,000 lb (2,268 - 2,722 kg)',
      PlantCity: 'PUEBLA',
      PlantCountry: 'MEXICO',
      VehicleType: 'MULTIPURPOSE PASSENGER VEHICLE (MPV)',
    },
    later: { BodyClass: 'Sport Utility Vehicle (SUV)/Multi-Purpose Vehicle (MPV)' },
    why:
      'an answer from after our snapshot: vPIC has since renamed the body class; the 2026-02-17 snapshot still says ' +
      '"Sport Utility Vehicle (SUV)/Multi-Purpose Vehicle (MPV)" (counted against us)',
  },
  {
    vin: '2HNYD18233H552413',
    src: 'verifik',
    kind: 'mpv',
    vpic: {
      ModelYear: '2003',
      Make: 'ACURA',
      Model: 'MDX',
      BodyClass: 'Sport Utility Vehicle (SUV)/Multi-Purpose Vehicle (MPV)',
      DisplacementL: '3.474057568',
      Doors: '5',
      EngineConfiguration: 'V-Shaped',
      EngineModel: 'J35A5',
      EngineCylinders: '6',
      GVWR: 'Class 1D: 5,001 - 6,000 lb (2,268 - 2,722 kg)',
      PlantCity: 'ALLISTON',
      PlantCountry: 'CANADA',
      PlantState: 'ONTARIO',
      VehicleType: 'MULTIPURPOSE PASSENGER VEHICLE (MPV)',
    },
  },
  {
    vin: 'KMHC85LCXHU026758',
    src: 'ioniq',
    kind: 'hybrid',
    vpic: {
      ModelYear: '2017',
      Make: 'HYUNDAI',
      Model: 'Ioniq',
      Trim: 'SEL',
      BodyClass: 'Hatchback/Liftback/Notchback',
      DisplacementL: '1.6',
      Doors: '5',
      EngineCylinders: '4',
      EngineModel: 'GDI KAPPA',
      FuelTypePrimary: 'Gasoline',
      GVWR: 'Class 1: 6,000 lb or less (2,722 kg or less)',
      PlantCity: 'ULSAN',
      PlantCountry: 'SOUTH KOREA',
      VehicleType: 'PASSENGER CAR',
    },
  },
  {
    vin: '1B3BR65EXSV201546',
    src: 'sendadf',
    kind: 'car',
    vpic: {
      ModelYear: '1995',
      Make: 'DODGE',
      Model: 'Viper',
      Trim: 'RT/10',
      BodyClass: 'Convertible/Cabriolet',
      Doors: '2',
      DisplacementL: '8',
      EngineConfiguration: 'V-Shaped',
      EngineCylinders: '10',
      FuelTypePrimary: 'Gasoline',
      PlantCity: 'DETROIT',
      PlantState: 'MICHIGAN',
      PlantCountry: 'UNITED STATES (USA)',
      VehicleType: 'PASSENGER CAR',
    },
  },
  {
    vin: '3VWFE21C04M000001',
    src: 'actor',
    kind: 'car',
    vpic: {
      ModelYear: '2004',
      Make: 'VOLKSWAGEN',
      Model: 'Beetle',
      Trim: 'Turbo S',
      BodyClass: 'Hatchback/Liftback/Notchback',
      VehicleType: 'PASSENGER CAR',
      Doors: '2',
      DisplacementL: '1.781',
      FuelTypePrimary: 'Gasoline',
      GVWR: 'Class 1: 6,000 lb or less (2,722 kg or less)',
      PlantCity: 'PUEBLA',
      PlantCountry: 'MEXICO',
    },
  },
  {
    vin: '5YJSA1E14FF087599',
    src: 'enrich',
    kind: 'ev',
    vpic: {
      ModelYear: '2015',
      Make: 'TESLA',
      Model: 'Model S',
      BodyClass: 'Hatchback/Liftback/Notchback',
      FuelTypePrimary: 'Electric',
      Doors: '5',
      PlantCity: 'FREMONT',
      PlantState: 'CALIFORNIA',
      VehicleType: 'PASSENGER CAR',
      GVWR: 'Class 1: 6,000 lb or less (2,722 kg or less)',
    },
  },
  { vin: 'WBAVB13506PT12345', src: 'actor', kind: 'car', vpic: { ModelYear: '2006', Make: 'BMW', Model: '325i' } },
  {
    vin: '3AKJHHDR3KSKX6689',
    src: 'webmock',
    kind: 'truck',
    vpic: { Make: 'FREIGHTLINER', Model: 'Cascadia', BodyClass: 'Truck-Tractor' },
  },
  {
    vin: '1FTFW5L86RFB45612',
    src: 'corgi#22',
    kind: 'truck',
    vpic: { ModelYear: '2024', Make: 'FORD', Model: 'F-150' },
  },
  { vin: '1FTFW4L86RFA86622', src: 'corgi#32', kind: 'truck', vpic: { Make: 'FORD', Model: 'F-150' } },
  {
    vin: 'JH2RC5000LM200053',
    src: 'audit',
    kind: 'motorcycle',
    vpic: { ModelYear: '2020', Make: 'HONDA', VehicleType: 'MOTORCYCLE' },
  },
  {
    vin: 'JH2SC5907LK100001',
    src: 'audit',
    kind: 'motorcycle',
    vpic: { ModelYear: '2020', Make: 'HONDA', VehicleType: 'MOTORCYCLE' },
  },
];

/**
 * The detail fields the measure judges (trim, series, body class, doors, fuel, cylinders, displacement, engine model
 * and configuration, plant, vehicle type, GVWR).
 */
export const DETAIL_FIELDS: VpicField[] = [
  'Series',
  'Trim',
  'BodyClass',
  'Doors',
  'FuelTypePrimary',
  'EngineCylinders',
  'DisplacementL',
  'EngineModel',
  'EngineConfiguration',
  'PlantCity',
  'PlantState',
  'PlantCountry',
  'VehicleType',
  'GVWR',
];

/** Our decode's value for a vPIC field (undefined: we say nothing). */
export function ourValue(d: Record<string, any>, f: VpicField): string | number | undefined | null {
  switch (f) {
    case 'ModelYear':
      return d.year;
    case 'Make':
      return d.make;
    case 'Model':
      return d.model;
    case 'Series':
      return d.series;
    case 'Trim':
      return d.trim?.name;
    case 'BodyClass':
      return d.body?.class;
    case 'Doors':
      return d.body?.doors;
    case 'FuelTypePrimary':
      return d.fuel?.primary;
    case 'EngineCylinders':
      return d.engine?.cylinders;
    case 'DisplacementL':
      return d.engine?.displacementL;
    case 'EngineModel':
      return d.engine?.model;
    case 'EngineConfiguration':
      return d.engine?.configuration;
    case 'PlantCity':
      return d.plant?.city;
    case 'PlantState':
      return d.plant?.state;
    case 'PlantCountry':
      return d.plant?.country;
    case 'VehicleType':
      return d.vehicleType;
    case 'GVWR':
      return d.gvwrClass;
  }
}

/**
 * Whether our value agrees with vPIC's: numbers as numbers (displacement within 0.05 L: vPIC writes 2.998832712 where
 * we round to 3.0), make and model letters and digits only (vPIC's API upper-cases makes), the rest case and spacing
 * aside (vPIC's API has written plant names in either case over the years).
 */
export function agrees(f: VpicField, ours: unknown, theirs: string): boolean {
  if (f === 'DisplacementL') return Math.abs(Number(ours) - Number(theirs)) <= 0.05;
  if (f === 'ModelYear' || f === 'Doors' || f === 'EngineCylinders') return Number(ours) === Number(theirs);
  const norm = (s: unknown) =>
    String(s ?? '')
      .toUpperCase()
      .replace(/\s+/g, ' ')
      .trim();
  if (f === 'Make' || f === 'Model')
    return norm(ours).replace(/[^A-Z0-9]/g, '') === norm(theirs).replace(/[^A-Z0-9]/g, '');
  return norm(ours) === norm(theirs);
}
