import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Rail } from '@vcs/x402-rail';
import { connectMcp, MCP_CLIENTS } from './support/mcp.ts';
import { type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// The official MCP conformance suite (`@modelcontextprotocol/conformance`, 0.2.0 alpha: the first with 2026-07-28's
// scenarios) run against POST /mcp as deployed with x402 payments, on both revisions. Every server scenario the suite
// has for a revision is either claimed — run, and each of its checks passes unless this file names it as not claimed —
// or not claimed, with the reason: a capability this server does not advertise (it advertises tools, and with
// payments taken x402's org.x402/payment extension on 2026-07-28), a fixture tool of the suite's own, or a stateless
// server's missing session.
const exec = promisify(execFile);
const conformanceCli = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '../dist/index.js',
);
type Revision = '2025-11-25' | '2026-07-28';
const REVISIONS: Revision[] = ['2025-11-25', '2026-07-28'];

const FIXTURE = "needs a fixture tool of the suite's own, which this server does not list";
const NO_PROMPTS = 'prompts are not advertised';
const NO_RESOURCES = 'resources are not advertised';

/** The scenarios claimed per revision, with the checks in them that are not (and why). */
const CLAIMED: Record<Revision, Record<string, Record<string, string>>> = {
  '2025-11-25': { 'server-initialize': {}, ping: {}, 'tools-list': {}, 'dns-rebinding-protection': {} },
  '2026-07-28': {
    'server-stateless': {
      'sep-2575-server-rejects-undeclared-capability': FIXTURE,
      'sep-2575-missing-capability-http-400': FIXTURE,
      'sep-2575-http-server-no-independent-requests-on-stream': FIXTURE,
      'sep-2575-server-no-log-without-loglevel': FIXTURE,
      'sep-2575-server-sends-prompts-list-changed-on-subscription': NO_PROMPTS,
      'sep-2575-server-sends-tools-list-changed-on-subscription': 'the tool list never changes (listChanged: false)',
    },
    'tools-list': {},
    'dns-rebinding-protection': {},
    'http-header-validation': {},
    caching: {
      'sep-2549-prompts-list-caching-hints': NO_PROMPTS,
      'sep-2549-resources-list-caching-hints': NO_RESOURCES,
      'sep-2549-resources-templates-list-caching-hints': NO_RESOURCES,
      'sep-2549-resources-read-caching-hints': NO_RESOURCES,
    },
  },
};

/** Every other server scenario of the suite, not claimed, and why. */
const NOT_CLAIMED: [RegExp, string][] = [
  [/^(tools-call-|json-schema-2020-12$)/, FIXTURE],
  [/^(elicitation-|input-required-result-)/, 'asks nothing of the client (no elicitation, sampling or roots)'],
  [/^prompts-/, NO_PROMPTS],
  [/^(resources-|sep-2164-resource-not-found$)/, NO_RESOURCES],
  [/^completion-complete$/, 'completions are not advertised'],
  [/^logging-set-level$/, 'logging is not advertised'],
  [/^(server-session-lifecycle|server-sse-)/, 'stateless: no session and no server-initiated stream'],
  [/^http-custom-header-server-validation$/, 'no tool declares x-mcp-header parameters'],
  [/^(tasks-|sep-2640-)/, 'an extension this server does not offer (tasks, skills)'],
];

/** The server scenarios the suite lists, each with the revisions (or `extension`) it applies to. */
async function serverScenarios(node: string): Promise<Map<string, string[]>> {
  const { stdout } = await exec(node, [conformanceCli, 'list']);
  const section = stdout.split(/\n\n/).find((s) => s.startsWith('Server scenarios'))!;
  return new Map(
    [...section.matchAll(/^\s+- (\S+) \[([^\]]+)\]$/gm)].map((m) => [m[1]!, m[2]!.split(',')] as [string, string[]]),
  );
}

type Check = { id: string; status: string; errorMessage?: string };

describe('the MCP conformance suite against POST /mcp (embedded)', () => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  /** A Node the suite runs on: it needs Node 22 or later (fs.globSync); the npm registry's node package otherwise. */
  let node: string;
  let scenarios: Map<string, string[]>;
  let out: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService('embedded', 1));
    node =
      Number(process.versions.node.split('.')[0]) >= 22
        ? process.execPath
        : (await exec('npx', ['--yes', '-p', 'node@24.11.0', '--', 'node', '-p', 'process.execPath'])).stdout.trim();
    scenarios = await serverScenarios(node);
    out = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  }, 180_000);
  afterAll(async () => {
    await stopPaidService({ rail, m });
    if (out) await rm(out, { recursive: true, force: true });
  });

  async function run(scenario: string, revision: Revision): Promise<Check[]> {
    const dir = join(out, revision, scenario);
    // The CLI's exit status says whether every check passed; the checks themselves are what is judged here.
    await exec(node, [
      conformanceCli,
      'server',
      '--url',
      `${base}/mcp`,
      '--scenario',
      scenario,
      '--spec-version',
      revision,
      '-o',
      dir,
    ]).catch(() => undefined);
    const [run] = await readdir(dir);
    return JSON.parse(await readFile(join(dir, run!, 'checks.json'), 'utf8')) as Check[];
  }

  it('advertises what the not-claimed reasons say: tools (no listChanged), and x402 payments on 2026-07-28 only', async () => {
    for (const kind of [MCP_CLIENTS[0], MCP_CLIENTS[1]]) {
      const s = await connectMcp(kind, base);
      try {
        const handshake = s.wire[0]!.result!;
        expect(handshake.capabilities).toEqual({
          tools: { listChanged: false },
          ...(kind.revision === '2026-07-28' ? { extensions: { 'org.x402/payment': {} } } : {}),
        });
      } finally {
        await s.close();
      }
    }
  });

  it.each(REVISIONS)('every server scenario of %s is claimed or listed as not claimed, with why', (revision) => {
    const applicable = [...scenarios].filter(([, tags]) => tags.includes(revision) || tags.includes('extension'));
    expect(applicable.length).toBeGreaterThan(10);
    for (const [name] of applicable) {
      if (name in CLAIMED[revision]) continue;
      const reason = NOT_CLAIMED.find(([pattern]) => pattern.test(name))?.[1];
      expect(reason, `${name} (${revision}) is neither claimed nor listed as not claimed`).toBeTruthy();
    }
  });

  for (const revision of REVISIONS)
    for (const [scenario, notClaimed] of Object.entries(CLAIMED[revision]))
      it(`${revision}: ${scenario} passes (but for the checks not claimed)`, async () => {
        expect(scenarios.get(scenario), `${scenario} is not a ${revision} scenario`).toContain(revision);
        const checks = await run(scenario, revision);
        expect(checks.length).toBeGreaterThan(0);
        for (const check of checks) {
          if (check.id in notClaimed) {
            // Still true that it is not passed: a check that passes now belongs to what is claimed.
            expect(check.status, `${check.id}: ${notClaimed[check.id]}`).not.toBe('SUCCESS');
            continue;
          }
          expect(['SUCCESS', 'INFO'], `${check.id}: ${check.errorMessage ?? ''}`).toContain(check.status);
        }
      }, 60_000);
});
