import { createHash } from 'node:crypto';

/** The sandbox's clock: every simulated date derives from this day, never from the wall clock. */
export const SANDBOX_TODAY = '2026-01-15';
/** The one payer the sandbox's deals have, so signing, mco and webhook payments name the same person. */
export const SANDBOX_PAYER = { name: 'Avery Chen', castRow: 'super-prime', creditTier: 'super-prime' } as const;

/** The VIN answered about when a capability is called without one. */
export const SANDBOX_DEFAULT_VIN = '1HGCM82633A004352';

/**
 * Dates by offset, made once: answers carry several, and a Date and its ISO string each was 4 % of the embedded
 * process's CPU.
 */
const datesByOffset = new Map<number, string>();
export function sandboxDate(offsetDays = 0): string {
  let date = datesByOffset.get(offsetDays);
  if (date === undefined) {
    const d = new Date(`${SANDBOX_TODAY}T00:00:00.000Z`);
    d.setUTCDate(d.getUTCDate() + offsetDays);
    date = d.toISOString().slice(0, 10);
    if (datesByOffset.size < 10_000) datesByOffset.set(offsetDays, date);
  }
  return date;
}
export function sandboxTimestamp(offsetDays = 0, hour = 12): string {
  return `${sandboxDate(offsetDays)}T${String(hour).padStart(2, '0')}:00:00.000Z`;
}

/**
 * sha256 of a short text, remembered: sandbox answers hash the same few (VIN, salt) pairs on every call, and a
 * hash per id was a tenth of a pillar's CPU under load. Bounded, oldest dropped first.
 */
const digests = new Map<string, Buffer>();
function digestOf(text: string): Buffer {
  let d = digests.get(text);
  if (!d) {
    d = createHash('sha256').update(text).digest();
    if (digests.size >= 20_000) digests.delete(digests.keys().next().value!);
    digests.set(text, d);
  }
  return d;
}

/** A deterministic generator seeded from a VIN and a salt: the same inputs give the same sequence. */
export class Seeded {
  private state: number;
  constructor(
    readonly vin: string,
    salt = '',
  ) {
    this.state = digestOf(`${vin}|${salt}`).readUInt32LE(0) || 1;
  }
  /** A float in [0, 1) (mulberry32). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** An id with a prefix, stable for this VIN and salt. */
  id(prefix: string, len = 12): string {
    return prefix + createHash('sha256').update(`${this.vin}|id|${prefix}`).digest('hex').slice(0, len);
  }
}

/** A stable id for (vin, kind): the same across every noun and call. */
export function stableId(prefix: string, vin: string, kind = prefix, len = 12): string {
  return (
    prefix +
    digestOf(`${vin}|${kind}`)
      .toString('hex', 0, Math.ceil(len / 2))
      .slice(0, len)
  );
}

/** Cents as a two-decimal string, computed in integers so no float rounding leaks into money. */
export function centsToDecimal(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const c = Math.abs(Math.round(cents));
  return `${sign}${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

export * from './stateThresholds.ts';
export * from './vehicleFacts.ts';
