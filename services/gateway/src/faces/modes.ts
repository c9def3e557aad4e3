import { readFileSync } from 'node:fs';
import type { Capability } from '@vcs/contract';
import { suite } from './suite.ts';

/**
 * The published mode of a capability. The catalog's `mode: 'live'` is only a candidacy (a live rail exists);
 * a candidate is published live only when the last recorded suite run passed its cases *at their current
 * digest* (suite-verdicts.json, written by test/suite.test.ts). Anything else is published as sandbox.
 */
export interface Verdicts {
  ranAt: string;
  suiteDigest: string;
  capabilities: Record<string, { digest: string; passed: boolean }>;
}

export const VERDICTS_URL = new URL('./suite-verdicts.json', import.meta.url);

let verdicts: Verdicts | undefined;
function loadVerdicts(): Verdicts {
  if (!verdicts) {
    try {
      verdicts = JSON.parse(readFileSync(VERDICTS_URL, 'utf8')) as Verdicts;
    } catch {
      verdicts = { ranAt: '', suiteDigest: '', capabilities: {} };
    }
  }
  return verdicts;
}

export function suitePassed(name: string): boolean {
  const v = loadVerdicts().capabilities[name];
  const current = suite().capabilities.find((c) => c.capability === name);
  return !!v && !!current && v.passed && v.digest === current.digest;
}

export function publishedMode(c: Capability): 'live' | 'sandbox' | 'declared' {
  if (c.mode === 'live') return suitePassed(c.name) ? 'live' : 'sandbox';
  return c.mode;
}
