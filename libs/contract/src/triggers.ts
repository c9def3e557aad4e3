import { requestText, type NextRequest } from './answer.ts';
import type { Capability } from './capability.ts';
import { capabilities } from './catalog.ts';

/** Every trigger some capability of the catalog honours (GET /catalog/triggers lists which). */
export const catalogTriggers: string[] = [...new Set(capabilities.flatMap((c) => c.triggers.map((t) => t.name)))];

/** A refused `Sandbox-Trigger`: the words of the 400 `trigger-not-honoured`, and the triggers that would be honoured. */
export interface TriggerRefusal {
  message: string;
  honoured: string[];
}

/** The trigger as a message quotes it: a header is the caller's text, so it is quoted and cut short. */
const quoted = (t: string) => JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t);

/**
 * Why `trigger` is refused on a call, or null when it is honoured. `on` is the capability the call runs (its catalog
 * entry lists the triggers it honours), or null where the route does not know it yet (every trigger of the catalog is
 * then honoured); `next` is the request to send again. A live key's call is real: no trigger is honoured on it
 * (docs/decisions.md, "A trigger is honoured or refused").
 */
export function triggerRefusal(
  trigger: string,
  on: Capability | null,
  environment: 'sandbox' | 'live',
  next: NextRequest,
): TriggerRefusal | null {
  const again = requestText(next);
  if (environment === 'live')
    return {
      message:
        `Sandbox-Trigger ${quoted(trigger)} does not apply to a live key: a live call is real and no trigger forces ` +
        `its outcome; send ${again} again without the Sandbox-Trigger header, or with a sandbox key (POST /keys)`,
      honoured: [],
    };
  const honoured = on ? on.triggers.map((t) => t.name) : catalogTriggers;
  if (honoured.includes(trigger)) return null;
  return {
    message: on
      ? `${on.name} does not honour the sandbox trigger ${quoted(trigger)}; it honours ${honoured.join(', ')}: ` +
        `send ${again} again with one of them, or without the Sandbox-Trigger header`
      : `no capability honours the sandbox trigger ${quoted(trigger)}; the triggers are ${honoured.join(', ')} ` +
        `(GET /catalog/triggers says which capability honours which): send ${again} again with one of them, ` +
        'or without the Sandbox-Trigger header',
    honoured,
  };
}
