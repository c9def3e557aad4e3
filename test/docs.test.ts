import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAID_CALL_BUDGET } from './support/paid-call-budget.ts';

/**
 * The docs and the code's comments say what is true now; the history of how it came to be is git's. A mention of
 * an issue or a session by its number, or an issue in parentheses, is a journal entry, and so is a date in the
 * prose of README.md or docs/ (a date in a code span, such as a protocol's revision name, is not prose).
 */
const root = join(import.meta.dirname, '..');
const TEXT = /\.(ts|mts|mjs|js|sql|ya?ml|md|sh)$|(^|\/)(Dockerfile|run)$/;

/** The files of the project below `dir` as git sees them (tracked, or new and not ignored): never a build output or
 * a bundle a bench script leaves behind, which quote other projects' text. */
function files(dir: string): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', dir], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((f) => f && TEXT.test(f))
    .map((f) => join(root, f));
}

// Written so that this file does not match them itself.
const journal = [/\bissue\s+#?\d/i, new RegExp('\\(' + 'issue\\b', 'i'), /\bsession\s+#?\d/i];
const isoDate = /\b20\d\d-\d\d-\d\d\b/;

/** Each line of `text` that matches one of `patterns`, as `path:line: text`. */
const hits = (path: string, text: string, patterns: RegExp[]) =>
  text
    .split('\n')
    .flatMap((line, i) =>
      patterns.some((p) => p.test(line)) ? [`${relative(root, path)}:${i + 1}: ${line.trim()}`] : [],
    );

/** Markdown prose only: fenced blocks and inline code spans blanked. */
const prose = (md: string) =>
  md.replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ' ')).replace(/`[^`\n]*`/g, '``');

const sources = ['libs', 'services', 'deploy', 'test', '.ci'].flatMap((d) => files(join(root, d)));
const docs = [join(root, 'README.md'), join(root, 'DEVELOPERS.md'), ...files(join(root, 'docs'))];

describe('docs say what is true now', () => {
  it('no issue or session number in README.md, docs/ or any source file or comment', () => {
    const found = [...docs, ...sources, join(root, 'vitest.config.ts')].flatMap((f) =>
      hits(f, readFileSync(f, 'utf8'), journal),
    );
    expect(found).toEqual([]);
  });

  it('no date of past work in the prose of README.md and docs/', () => {
    const found = docs.flatMap((f) => hits(f, prose(readFileSync(f, 'utf8')), [isoDate]));
    expect(found).toEqual([]);
  });

  it("decisions.md's table of contents lists every subject, in order, by its GitHub anchor", () => {
    const text = readFileSync(join(root, 'docs', 'decisions.md'), 'utf8');
    const subjects = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    const anchor = (title: string) =>
      title
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-');
    const listed = [...text.matchAll(/^- \[(.+)\]\(#(.+)\)$/gm)].map((m) => [m[1], m[2]]);
    expect(listed).toEqual(subjects.map((t) => [t, anchor(t)]));
  });

  it('the journal patterns catch what they are for', () => {
    const caught = (line: string) => journal.some((p) => p.test(line));
    // Each example is put together from pieces, so that this file holds none of them whole.
    const lines = [
      ['as ', 'issue', ' 27'],
      ['the key cache (', 'Issue', ' #4)'],
      ['(', 'issue'],
      ['session', ' 15 found'],
    ].map((pieces) => pieces.join(''));
    expect(lines.map(caught)).toEqual([true, true, true, true]);
    expect(['issues 22 and 32 of another repository', 'the signing session', 'sessionIdGenerator'].map(caught)).toEqual(
      [false, false, false],
    );
    expect(hits('x.md', prose('measured on 2026-11-27, in `MCP 2026-07-28`'), [isoDate])).toHaveLength(1);
    expect(hits('x.md', prose('the revision `2026-07-28`'), [isoDate])).toEqual([]);
  });
});

describe('docs/performance.md states the ceilings the paid-call count test holds', () => {
  it('its table "Round trips and messages per paid call" gives each ceiling of support/paid-call-budget.ts', () => {
    const text = readFileSync(join(root, 'docs', 'performance.md'), 'utf8');
    const { embedded: e, distributed: d } = PAID_CALL_BUDGET;
    const rows: [string, number][] = [
      ['embedded: statements of the steps', e.stepStatements],
      ["embedded: the relay's statements", e.relayStatements],
      ['embedded: bus messages', e.busMessages],
      ["distributed: Postgres round trips of commerce's steps", d.stepRoundTrips.commerce],
      ["distributed: Postgres round trips of the services pillar's steps", d.stepRoundTrips['services-pillar']],
      [
        'distributed: Postgres round trips of the gateway, workflows and data',
        Math.max(d.stepRoundTrips.gateway, d.stepRoundTrips.workflows, d.stepRoundTrips.data),
      ],
      ["distributed: the relays' Postgres round trips, all processes", d.relayRoundTrips],
      ['distributed: NATS messages, all processes', d.natsMessages],
    ];
    for (const [label, ceiling] of rows) expect(text).toContain(`| ${label} | ${ceiling} |`);
    expect(d.untouched).toEqual(['workflows', 'data']);
    expect(text).toContain('| distributed: round trips and NATS messages of workflows and data | 0 |');
  });
});
