/**
 * `pnpm bench:decode` (not a test): VIN decoding from vPIC as the data pillar runs it, in this process. Prints the load
 * time, the first decode of each of a set of distinct real VINs (none seen before: different makes, WMIs, years and
 * vehicle types, so neither our LRU nor the decoder core's query cache answers them), the same VINs decoded again
 * (the LRU), RSS after loading and after decoding, and the load average (the machine is shared: a busy one slows it).
 *   BENCH_SEEN_ROUNDS=200 pnpm bench:decode
 */
import { loadavg } from 'node:os';
import { decodeVin, warmVpic } from '@vcs/vin';

const SEEN_ROUNDS = Number(process.env.BENCH_SEEN_ROUNDS ?? 100);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
const rssMb = () => Math.round(process.memoryUsage().rss / 2 ** 20);

// Real VINs (libs/vin/src/vin.test.ts names where each comes from), one per vehicle: cars, trucks, SUVs, EVs,
// motorcycles (each decoded in both 30-year cycles), an incomplete truck, 1987 to 2024.
const VINS = [
  '1HGCM82633A004352',
  'JF1GPAD60D1803590',
  '5YJSA1H12FFP71790',
  '1HD1GP4558K319097',
  'SCFEBBELXDGD17560',
  '1FV3GFBC0YHA74039',
  'JH4KA2650HC000268',
  'JH2RC5000LM200053',
  'JH2SC5907LK100001',
  '1FTFW5L86RFB45612',
  '1FTEX1CM8EFB88051',
  '1FTFW1EF7BFB11754',
  '1FTFW1EV2AFB19783',
  '1FT8W3BT6FEB34730',
  '1FT7W2BT3JEB02011',
  'WBAVL1C5XFVY41004',
  '5UXWX9C58F0D45921',
  '3GNKBHR47NS184058',
  '2GKFLTEK4H6343592',
  '2HKRW2H20NH207506',
  '5NMS3CAA0LH217545',
  'KM8R5DGE3PU560806',
  '1C4PJMCBXKD279503',
  'KNDERCAA9M7182895',
  'JM3TCBCY6M0454042',
  '5N1AT2MVXLC807279',
  '1C6SRFETXKN545625',
  'JF2GTABC3L8272553',
  'JTNKHMBX1L1083032',
  '3VV4B7AX5MM144910',
  'WDBTK72F57F202954',
  '4USBU53567LW92799',
];

const rss0 = rssMb();
let t = performance.now();
await warmVpic();
const loadMs = performance.now() - t;
const rssLoaded = rssMb();
const unseen: [number, string][] = [];
for (const vin of VINS) {
  t = performance.now();
  await decodeVin(vin);
  unseen.push([performance.now() - t, vin]);
}
const seen: number[] = [];
for (let r = 0; r < SEEN_ROUNDS; r++)
  for (const vin of VINS) {
    t = performance.now();
    await decodeVin(vin);
    seen.push(performance.now() - t);
  }
const f = (x: number) => Number(x.toFixed(2));
const u = unseen.map(([ms]) => ms);
const worst = [...unseen].sort((a, b) => b[0] - a[0])[0]!;
console.log(
  JSON.stringify({
    vins: VINS.length,
    loadMs: Math.round(loadMs),
    unseenP50Ms: f(pct(u, 50)),
    unseenP99Ms: f(pct(u, 99)),
    unseenMaxMs: f(worst[0]),
    unseenMaxVin: worst[1],
    seenDecodes: seen.length,
    seenP50Ms: f(pct(seen, 50)),
    seenP99Ms: f(pct(seen, 99)),
    rssBeforeLoadMb: rss0,
    rssLoadedMb: rssLoaded,
    rssAfterMb: rssMb(),
    // The machine's 1-minute load average when the run ended: figures taken on a busy 2-core machine are upper bounds.
    loadAvg1: Number(loadavg()[0]!.toFixed(2)),
  }),
);
process.exit(0);
