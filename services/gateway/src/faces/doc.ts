import { FAVICON } from './favicon.ts';

// One small document model for every human-readable face: the record, the doors and the catalog pages
// are built once as a Doc and rendered to Markdown or HTML, so the two never drift apart.

export interface Link {
  label: string;
  href: string;
  note?: string;
}
export interface Section {
  heading: string;
  /** HTML id, so `#<id>` anchors work (catalog capability anchors). */
  id?: string;
  text?: string[];
  facts?: [label: string, value: string][];
  links?: Link[];
  /** Preformatted block (JSON values). */
  code?: string;
  sections?: Section[];
}
export interface Doc {
  title: string;
  summary: string;
  sections: Section[];
  links?: Link[];
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const mdEsc = (s: string) => s.replace(/([\\`*_[\]|])/g, '\\$1');

function sectionMd(s: Section, depth: number): string {
  const out = [...(s.id ? [`<a id="${s.id}"></a>`, ''] : []), `${'#'.repeat(depth)} ${s.heading}`, ''];
  for (const t of s.text ?? []) out.push(t, '');
  if (s.facts?.length) {
    out.push('| Field | Value |', '|---|---|');
    for (const [k, v] of s.facts) out.push(`| ${mdEsc(k)} | ${mdEsc(v)} |`);
    out.push('');
  }
  for (const l of s.links ?? []) out.push(`- [${mdEsc(l.label)}](${l.href})${l.note ? `: ${l.note}` : ''}`);
  if (s.links?.length) out.push('');
  if (s.code) out.push('```json', s.code, '```', '');
  for (const sub of s.sections ?? []) out.push(sectionMd(sub, Math.min(depth + 1, 6)));
  return out.join('\n');
}

export function toMarkdown(d: Doc): string {
  const out = [`# ${d.title}`, '', `> ${d.summary}`, ''];
  for (const l of d.links ?? []) out.push(`- [${mdEsc(l.label)}](${l.href})${l.note ? `: ${l.note}` : ''}`);
  if (d.links?.length) out.push('');
  for (const s of d.sections) out.push(sectionMd(s, 2));
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

const linkHtml = (l: Link) =>
  `<li><a href="${esc(l.href)}">${esc(l.label)}</a>${l.note ? ` — ${esc(l.note)}` : ''}</li>`;

function sectionHtml(s: Section, depth: number): string {
  const h = `h${Math.min(depth, 6)}`;
  const parts = [`<section${s.id ? ` id="${esc(s.id)}"` : ''}>`, `<${h}>${esc(s.heading)}</${h}>`];
  for (const t of s.text ?? []) parts.push(`<p>${esc(t)}</p>`);
  if (s.facts?.length)
    parts.push(
      '<table><tbody>' +
        s.facts.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${esc(v)}</td></tr>`).join('') +
        '</tbody></table>',
    );
  if (s.links?.length) parts.push(`<ul>${s.links.map(linkHtml).join('')}</ul>`);
  // A block that scrolls must take keyboard focus to be scrolled without a mouse; its label names it.
  if (s.code)
    parts.push(
      `<pre tabindex="0" role="region" aria-label="${esc(s.heading)} (JSON)"><code>${esc(s.code)}</code></pre>`,
    );
  for (const sub of s.sections ?? []) parts.push(sectionHtml(sub, depth + 1));
  parts.push('</section>');
  return parts.join('\n');
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}' +
  'table{border-collapse:collapse;margin:.5rem 0}' +
  'th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}' +
  'pre{background:#f4f4f4;padding:.75rem;overflow:auto}section{margin:1rem 0}a{color:#0645ad}';

/** Every page's start, up to its body: the language, the title, the icon, and what `head` adds (styles). */
export function pageStart(title: string, head: string[]): string[] {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<link rel="icon" href="${FAVICON}" type="image/svg+xml">`,
    ...head,
    '</head>',
    '<body>',
  ];
}

/** A complete, script-free HTML page. */
export function toHtml(d: Doc): string {
  return [
    ...pageStart(d.title, [`<style>${STYLE}</style>`]),
    '<header>',
    `<h1>${esc(d.title)}</h1>`,
    `<p>${esc(d.summary)}</p>`,
    d.links?.length ? `<nav><ul>${d.links.map(linkHtml).join('')}</ul></nav>` : '',
    '</header>',
    '<main>',
    ...d.sections.map((s) => sectionHtml(s, 2)),
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
