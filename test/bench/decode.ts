/**
 * `pnpm bench:decode` (not a test): VIN decoding from vPIC as the data pillar runs it, in this process. Prints the
 * load time, decode p50/p99 for VINs not seen before and for VINs seen again (the LRU), and RSS after loading.
 *   BENCH_DECODES=2000 pnpm bench:decode
 */
import { expectedCheckDigit } from '@vcs/contract';
import { decodeVin, warmVpic } from '@vcs/vin';

const N = Number(process.env.BENCH_DECODES ?? 1000);
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN; };
const rssMb = () => Math.round(process.memoryUsage().rss / 2 ** 20);

// Real VIN prefixes (WMI + VDS + year + plant) from the test set; serials vary, check digits are made valid.
const PREFIXES = ['1HGCM826_3A', '1FTFW5L8_RF', '5UXWX9C5_F0', '3GNKBHR4_NS', '2HKRW2H2_NH', 'KM8R5DGE_PU', '1C4PJMCB_KD', 'JM3TCBCY_M0', '5N1AT2MV_LC', 'JTNKHMBX_L1', '3VV4B7AX_MM', 'WDBTK72F_7F', '1M8GDM9A_KP', 'JF1GPAD6_D1'];
function vinFor(i: number): string {
  const [head, tail] = PREFIXES[i % PREFIXES.length]!.split('_') as [string, string];
  const raw = `${head}0${tail}${String(100000 + i).slice(-6)}`;
  return raw.slice(0, 8) + expectedCheckDigit(raw) + raw.slice(9);
}

let t = performance.now();
await warmVpic();
const loadMs = performance.now() - t;
const unseen: number[] = [];
const seen: number[] = [];
for (let i = 0; i < N; i++) { t = performance.now(); await decodeVin(vinFor(i)); unseen.push(performance.now() - t); }
for (let i = 0; i < N; i++) { t = performance.now(); await decodeVin(vinFor(i)); seen.push(performance.now() - t); }
const f = (x: number) => x.toFixed(2);
console.log(JSON.stringify({ decodes: N, loadMs: Math.round(loadMs), unseenP50Ms: f(pct(unseen, 50)), unseenP99Ms: f(pct(unseen, 99)), seenP50Ms: f(pct(seen, 50)), seenP99Ms: f(pct(seen, 99)), rssMb: rssMb() }));
process.exit(0);
