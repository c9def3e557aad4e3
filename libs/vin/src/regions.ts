// ISO 3780 world manufacturer identifier ranges: region from position 1, country from positions 1–2.
// The second character runs A–Z (no I, O, Q) then 1–9, 0, which is the order ranges are written in.
const ORDER = 'ABCDEFGHJKLMNPRSTUVWXYZ1234567890';

export function regionOf(first: string): string {
  if ('ABCDEFGH'.includes(first)) return 'Africa';
  if ('JKLMNPR'.includes(first)) return 'Asia';
  if ('STUVWXYZ'.includes(first)) return 'Europe';
  if ('12345'.includes(first)) return 'North America';
  if ('67'.includes(first)) return 'Oceania';
  if ('89'.includes(first)) return 'South America';
  return 'Unknown';
}

/** [first character, second-character range start, range end, country]. */
const COUNTRY_RANGES: [string, string, string, string][] = [
  ['A', 'A', 'H', 'South Africa'], ['A', 'J', 'N', 'Ivory Coast'],
  ['B', 'A', 'E', 'Angola'], ['B', 'F', 'K', 'Kenya'], ['B', 'L', 'R', 'Tanzania'],
  ['C', 'A', 'E', 'Benin'], ['C', 'F', 'K', 'Madagascar'], ['C', 'L', 'R', 'Tunisia'],
  ['D', 'A', 'E', 'Egypt'], ['D', 'F', 'K', 'Morocco'], ['D', 'L', 'R', 'Zambia'],
  ['E', 'A', 'E', 'Ethiopia'], ['E', 'F', 'K', 'Mozambique'],
  ['F', 'A', 'E', 'Ghana'], ['F', 'F', 'K', 'Nigeria'],
  ['J', 'A', '0', 'Japan'],
  ['K', 'A', 'E', 'Sri Lanka'], ['K', 'F', 'K', 'Israel'], ['K', 'L', 'R', 'South Korea'], ['K', 'S', '0', 'Kazakhstan'],
  ['L', 'A', '0', 'China'],
  ['M', 'A', 'E', 'India'], ['M', 'F', 'K', 'Indonesia'], ['M', 'L', 'R', 'Thailand'], ['M', 'S', '0', 'Myanmar'],
  ['N', 'A', 'E', 'Iran'], ['N', 'F', 'K', 'Pakistan'], ['N', 'L', 'R', 'Turkey'],
  ['P', 'A', 'E', 'Philippines'], ['P', 'F', 'K', 'Singapore'], ['P', 'L', 'R', 'Malaysia'],
  ['R', 'A', 'E', 'United Arab Emirates'], ['R', 'F', 'K', 'Taiwan'], ['R', 'L', 'R', 'Vietnam'], ['R', 'S', '0', 'Saudi Arabia'],
  ['S', 'A', 'M', 'United Kingdom'], ['S', 'N', 'T', 'Germany'], ['S', 'U', 'Z', 'Poland'], ['S', '1', '4', 'Latvia'],
  ['T', 'A', 'H', 'Switzerland'], ['T', 'J', 'P', 'Czech Republic'], ['T', 'R', 'V', 'Hungary'], ['T', 'W', '1', 'Portugal'],
  ['U', 'H', 'M', 'Denmark'], ['U', 'N', 'T', 'Ireland'], ['U', 'U', 'Z', 'Romania'], ['U', '5', '7', 'Slovakia'],
  ['V', 'A', 'E', 'Austria'], ['V', 'F', 'R', 'France'], ['V', 'S', 'W', 'Spain'], ['V', 'X', '2', 'Serbia'], ['V', '3', '5', 'Croatia'], ['V', '6', '0', 'Estonia'],
  ['W', 'A', '0', 'Germany'],
  ['X', 'A', 'E', 'Bulgaria'], ['X', 'F', 'K', 'Greece'], ['X', 'L', 'R', 'Netherlands'], ['X', 'S', 'W', 'Russia'], ['X', 'X', '2', 'Luxembourg'], ['X', '3', '0', 'Russia'],
  ['Y', 'A', 'E', 'Belgium'], ['Y', 'F', 'K', 'Finland'], ['Y', 'S', 'W', 'Sweden'], ['Y', 'X', '2', 'Norway'], ['Y', '3', '5', 'Belarus'], ['Y', '6', '0', 'Ukraine'],
  ['Z', 'A', 'R', 'Italy'], ['Z', 'X', '2', 'Slovenia'], ['Z', '3', '5', 'Lithuania'],
  ['1', 'A', '0', 'United States'], ['4', 'A', '0', 'United States'], ['5', 'A', '0', 'United States'],
  ['2', 'A', '0', 'Canada'], ['3', 'A', 'W', 'Mexico'], ['3', 'X', '7', 'Costa Rica'],
  ['6', 'A', 'W', 'Australia'], ['7', 'A', 'E', 'New Zealand'],
  ['8', 'A', 'E', 'Argentina'], ['8', 'F', 'K', 'Chile'], ['8', 'L', 'R', 'Ecuador'], ['8', 'S', 'W', 'Peru'], ['8', 'X', '2', 'Venezuela'],
  ['9', 'A', 'E', 'Brazil'], ['9', 'F', 'K', 'Colombia'], ['9', 'L', 'R', 'Paraguay'], ['9', 'S', 'W', 'Uruguay'], ['9', '3', '9', 'Brazil'],
];

export function countryOf(first: string, second: string): string {
  const at = ORDER.indexOf(second);
  for (const [f, from, to, country] of COUNTRY_RANGES) {
    if (f === first && at >= ORDER.indexOf(from) && at <= ORDER.indexOf(to)) return country;
  }
  return 'Unknown';
}
