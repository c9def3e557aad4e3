import { existsSync } from 'node:fs';

/** Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it), or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether a browser suite runs here: without a Chromium binary it is skipped with one line naming it, except in CI,
 * where a missing browser fails the run (as missing servers do, `serversFor`).
 */
export function chromiumFor(suite: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `${suite} needs Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI) throw new Error(`CI must run the ${why}`);
  console.warn(`${suite} skipped: it ${why.slice(suite.length + 1)}`);
  return false;
}

/** Headless Chromium through playwright-core, as the browser suite drives it. */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--headless'],
  });
}
