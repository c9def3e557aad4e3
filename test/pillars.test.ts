/**
 * A pillar is declared once, in the catalog (`pillars`, libs/contract); deploy/services.ts names its service. The
 * embedded process, the build, the launcher and the test harness read that list; the compose file and the Dockerfile
 * cannot, so this checks them against it: a pillar added to the catalog and not deployed fails here, by name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pillars } from '@vcs/contract';
import { allPillars } from '@vcs/embedded';
import { entries } from '../deploy/build.ts';
import { PILLAR_SERVICES, pillarService, replicasSetting, SERVICES } from '../deploy/services.ts';

const ROOT = join(import.meta.dirname, '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** The compose file's services, each with the text of its block (the file is YAML of two-space indentation). */
function composeServices(): Map<string, string> {
  const text = read('deploy/docker-compose.yml');
  const body = text.slice(text.indexOf('\nservices:\n') + 1).split(/\n(?=\S)/)[0]!;
  const out = new Map<string, string>();
  for (const block of body.split(/\n(?=  [\w-]+:\s*$)/m).slice(1)) out.set(/^ {2}([\w-]+):/.exec(block)![1]!, block);
  return out;
}

describe('pillars: one list, from the catalog', () => {
  it('each pillar has its service folder and package, and the embedded process runs its definition', () => {
    expect(PILLAR_SERVICES).toEqual(pillars.map((p) => pillarService[p]));
    for (const p of pillars) {
      const dir = `services/${pillarService[p]}`;
      expect(existsSync(join(ROOT, dir, 'src', 'main.ts')), `${dir}/src/main.ts`).toBe(true);
      expect(JSON.parse(read(`${dir}/package.json`)).name).toBe(`@vcs/${pillarService[p]}`);
    }
    expect(allPillars.map((d) => [d.pillar, d.name])).toEqual(pillars.map((p) => [p, pillarService[p]]));
  });

  it('the build bundles every service', () => {
    expect(Object.keys(entries).sort()).toEqual(['embedded', ...SERVICES].sort());
  });

  it('deploy/docker-compose.yml has a service per pillar, with its SERVICE and an operator-set replica count', () => {
    const services = composeServices();
    for (const s of SERVICES) {
      const block = services.get(s);
      expect(block, `compose service ${s}`).toBeDefined();
      expect(block).toContain('<<: *service');
      expect(block).toMatch(new RegExp(`SERVICE: ${s}\\b`));
      if (s !== 'gateway') expect(block).toContain(`replicas: "\${${replicasSetting(s)}:-1}"`);
    }
    // Nothing else runs the image: every service built from it is the gateway or a pillar's.
    const fromImage = [...services].filter(([, b]) => b.includes('<<: *service')).map(([name]) => name);
    expect(fromImage.sort()).toEqual([...SERVICES].sort());
  });

  it("the Dockerfile installs every service's dependencies", () => {
    const dockerfile = read('deploy/Dockerfile');
    for (const s of [...SERVICES, 'embedded'])
      expect(dockerfile).toContain(`COPY services/${s}/package.json services/${s}/`);
  });
});
