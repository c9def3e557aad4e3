// A small make/model table: VIN prefixes (WMI plus the leading vehicle-descriptor characters) whose model
// is publicly documented. Longest prefix wins. Anything else answers the make with model "Unknown";
// the decision to ship this table rather than the full vPIC database is in docs/decisions.md.
const ROWS: [prefix: string, model: string, body?: string][] = [
  ['1HGCM', 'Accord', 'Sedan'], ['1HGCP', 'Accord', 'Sedan'], ['1HGCR', 'Accord', 'Sedan'], ['1HGCV', 'Accord', 'Sedan'],
  ['1HGEM', 'Civic', 'Coupe'], ['1HGES', 'Civic', 'Sedan'], ['2HGFA', 'Civic', 'Sedan'], ['2HGFB', 'Civic', 'Sedan'], ['2HGFC', 'Civic', 'Sedan'], ['19XFC', 'Civic', 'Sedan'],
  ['5FNRL', 'Odyssey', 'Minivan'], ['5FNYF', 'Pilot', 'SUV'], ['5J6RW', 'CR-V', 'SUV'], ['2HKRW', 'CR-V', 'SUV'], ['JHLRE', 'CR-V', 'SUV'],
  ['KM8K', 'Kona', 'SUV'], ['KM8J', 'Tucson', 'SUV'], ['KM8S', 'Santa Fe', 'SUV'], ['5NPE', 'Sonata', 'Sedan'], ['5NPD', 'Elantra', 'Sedan'], ['KMHD', 'Elantra', 'Sedan'],
  ['5YJ3', 'Model 3', 'Sedan'], ['5YJS', 'Model S', 'Hatchback'], ['5YJX', 'Model X', 'SUV'], ['5YJY', 'Model Y', 'SUV'], ['7SAY', 'Model Y', 'SUV'],
  ['1FTFW', 'F-150', 'Pickup'], ['1FTEW', 'F-150', 'Pickup'], ['1FTEX', 'F-150', 'Pickup'], ['1FTFX', 'F-150', 'Pickup'], ['1FT7W', 'F-250 Super Duty', 'Pickup'], ['1FT8W', 'F-350 Super Duty', 'Pickup'],
  ['1FA6P8', 'Mustang', 'Coupe'], ['1FADP3', 'Focus', 'Sedan'], ['3FA6P0', 'Fusion', 'Sedan'], ['1FMCU', 'Escape', 'SUV'], ['1FM5K', 'Explorer', 'SUV'],
  ['1G1Y', 'Corvette', 'Coupe'], ['1G1Z', 'Malibu', 'Sedan'], ['1G1J', 'Cavalier', 'Sedan'], ['1G1P', 'Cruze', 'Sedan'], ['1G1F', 'Camaro', 'Coupe'], ['1G1R', 'Volt', 'Hatchback'], ['1G1F1', 'Bolt EV', 'Hatchback'],
  ['JTDKN3D', 'Prius', 'Hatchback'], ['JTDKB', 'Prius', 'Hatchback'], ['JTDKAR', 'Prius', 'Hatchback'], ['JTDBR', 'Corolla', 'Sedan'], ['JTDEP', 'Corolla', 'Sedan'], ['4T1B', 'Camry', 'Sedan'], ['4T1G', 'Camry', 'Sedan'], ['2T3', 'RAV4', 'SUV'], ['5TDZ', 'Sequoia', 'SUV'], ['5TFD', 'Tundra', 'Pickup'],
  ['WVWZZZ1K', 'Golf', 'Hatchback'], ['3VWF', 'Jetta', 'Sedan'], ['3VW2', 'Jetta', 'Sedan'], ['1VWA', 'Passat', 'Sedan'], ['1VWB', 'Passat', 'Sedan'], ['WVGZZZ5N', 'Tiguan', 'SUV'],
];

const sorted = [...ROWS].sort((a, b) => b[0].length - a[0].length);

export function modelOf(vin: string): { model: string; body?: string } | null {
  const hit = sorted.find(([prefix]) => vin.startsWith(prefix));
  return hit ? { model: hit[1], body: hit[2] } : null;
}
