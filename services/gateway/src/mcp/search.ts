import { callLine, capabilities, type Capability } from '@vcs/contract';

/**
 * What an agent needs to call a capability next, in two lines: what it does, then route, gate, inputs, answer,
 * price.
 */
export function capabilityLine(c: Capability): string {
  return `${c.name} — ${c.summary}\n${callLine(c)}`;
}

const words = (s: string) =>
  s
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1);

/** Rank capabilities by the query's words: a hit on the wire name counts most, then the summary, then the path. */
export function searchCapabilities(query: string, limit = 10): { c: Capability; score: number }[] {
  const q = [...new Set(words(query))];
  const scored = capabilities.map((c) => {
    const name = words(c.name),
      summary = words(c.summary),
      path = words(c.path);
    let score = 0;
    for (const w of q) {
      const stem = (x: string) => x === w || (w.length > 3 && (x.startsWith(w) || (w.startsWith(x) && x.length > 3)));
      if (name.some(stem)) score += 3;
      if (summary.some(stem)) score += 1;
      if (path.some(stem)) score += 1;
      if (c.gate === w || c.facet === w || c.pillar === w) score += 1;
    }
    return { c, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.c.name.localeCompare(b.c.name))
    .slice(0, limit);
}
