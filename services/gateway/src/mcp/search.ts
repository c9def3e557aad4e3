import { capabilities, type Capability, type Price } from '@vcs/contract';

export function priceText(p: Price): string {
  if (p.model === 'free') return 'free';
  if (p.model === 'take-rate') return `${+(p.rate * 100).toFixed(2)}% of ${p.base} (est. ${p.amount} ${p.currency}, ceiling ${p.ceiling})`;
  if (p.model === 'metered') return `${p.amount} ${p.currency} per ${p.per} (ceiling ${p.ceiling})`;
  return `${p.amount} ${p.currency} (ceiling ${p.ceiling})`;
}

/** One line an agent can act on: wire name, route, gate, price, summary. */
export function capabilityLine(c: Capability): string {
  return `${c.name} — ${c.method} ${c.path} · gate ${c.gate} · ${priceText(c.price)} · ${c.summary}`;
}

const words = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1);

/** Rank capabilities by the query's words: a hit on the wire name counts most, then the summary, then the path. */
export function searchCapabilities(query: string, limit = 10): { c: Capability; score: number }[] {
  const q = [...new Set(words(query))];
  const scored = capabilities.map((c) => {
    const name = words(c.name), summary = words(c.summary), path = words(c.path);
    let score = 0;
    for (const w of q) {
      const stem = (x: string) => x === w || (w.length > 3 && (x.startsWith(w) || w.startsWith(x) && x.length > 3));
      if (name.some(stem)) score += 3;
      if (summary.some(stem)) score += 1;
      if (path.some(stem)) score += 1;
      if (c.gate === w || c.facet === w || c.pillar === w) score += 1;
    }
    return { c, score };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.c.name.localeCompare(b.c.name)).slice(0, limit);
}
