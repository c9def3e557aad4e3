import type { Price } from '@vcs/contract';

/** A price in words, for pages; the figures come from the catalog's price data. */
export function priceText(p: Price): string {
  switch (p.model) {
    case 'free': return 'free';
    case 'metered': return `${p.amount} ${p.currency} per ${p.per} (ceiling ${p.ceiling})`;
    case 'flat': return `${p.amount} ${p.currency} flat (ceiling ${p.ceiling})`;
    case 'take-rate': return `${(p.rate * 100).toFixed(1)} % of ${p.base}, sandbox quote ${p.amount} ${p.currency} (ceiling ${p.ceiling})`;
  }
}
