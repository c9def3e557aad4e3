/**
 * Total-loss thresholds by US state: the damage-to-value ratio at or above which a vehicle must be
 * declared a total loss. Values are the fixed percentages in state statutes and insurance codes as
 * commonly published (e.g. TX 100%, FL 80%, NY 75%, IA 50%). States that use the total-loss formula
 * (repair + salvage ≥ ACV) instead of a fixed ratio are absent: they fall back to the default.
 * Percent as an integer so comparisons stay exact.
 */
export const stateTotalLossThresholdPct: Readonly<Record<string, number>> = {
  AL: 75,
  AR: 70,
  CO: 100,
  DC: 75,
  FL: 80,
  IN: 70,
  IA: 50,
  KS: 75,
  KY: 75,
  LA: 75,
  MD: 75,
  MI: 75,
  MN: 80,
  MO: 80,
  NE: 75,
  NV: 65,
  NH: 75,
  NY: 75,
  NC: 75,
  ND: 75,
  OK: 60,
  OR: 80,
  SC: 75,
  TN: 75,
  TX: 100,
  VA: 75,
  WV: 75,
  WI: 70,
  WY: 75,
};

/** Used where a state's threshold is not a fixed percentage or is not known. */
export const DEFAULT_THRESHOLD_PCT = 75;

export function thresholdPctFor(state: string): number {
  return stateTotalLossThresholdPct[state.toUpperCase()] ?? DEFAULT_THRESHOLD_PCT;
}
