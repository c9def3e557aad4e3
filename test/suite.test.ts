import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities } from '@vcs/contract';
import { modes, startHarness, type Harness } from './support/harness.ts';
import { runSuite } from './support/suite-runner.ts';

// The verdicts the gateway publishes modes from (services/gateway/src/faces/modes.ts).
const VERDICTS = new URL('../services/gateway/src/faces/suite-verdicts.json', import.meta.url);

describe.each(modes())('acceptance suite from /suite.json (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('runs every case over HTTP; each answers a typed envelope, and every capability published live passes', async () => {
    const { suite, results, byCapability } = await runSuite(h.baseUrl);
    expect(suite.capabilities.map((c: any) => c.capability)).toEqual(capabilities.map((c) => c.name));
    for (const r of results) expect(r.status, `${r.id}: ${r.why}`).toBeLessThan(500);
    // Capabilities the catalog published as live must pass now: a stale verdict is a failure.
    const catalog = await (await fetch(`${h.baseUrl}/catalog`)).json();
    const live = catalog.nouns.flatMap((n: any) =>
      n.capabilities.filter((c: any) => c.mode === 'live').map((c: any) => c.name),
    );
    for (const name of live)
      expect(
        byCapability.get(name)?.passed,
        `${name} is published live but fails: ${results
          .filter((r) => r.capability === name && !r.passed)
          .map((r) => `${r.id} ${r.why}`)
          .join('; ')}`,
      ).toBe(true);
    // The keyless foundation reads must pass their cases.
    for (const name of ['signing.status', 'mco.status']) expect(byCapability.get(name)?.passed, name).toBe(true);

    const failing = results.filter((r) => !r.passed);
    if (failing.length)
      console.info(
        `[suite ${mode}] ${results.length - failing.length}/${results.length} cases pass; failing:\n${failing.map((r) => `  ${r.id}: ${r.why}`).join('\n')}`,
      );
    if (process.env.UPDATE_SUITE_VERDICTS && mode === 'embedded') {
      const verdicts = {
        ranAt: new Date().toISOString(),
        suiteDigest: suite.digest,
        capabilities: Object.fromEntries(byCapability),
      };
      writeFileSync(VERDICTS, JSON.stringify(verdicts, null, 2) + '\n');
    }
  }, 120_000);
});
