/**
 * Whether a subscription pattern (`*`, `TotalLoss.*`, `TotalLoss.confirmed`, `TotalLoss.confirmed@1`) matches an event
 * type.
 */
export function patternMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  const [noun, verbAt] = type.split('.') as [string, string];
  const verb = verbAt.split('@')[0];
  if (pattern === `${noun}.*`) return true;
  return pattern === type || pattern === `${noun}.${verb}`;
}
