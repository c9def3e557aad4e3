import { capabilityByName } from './catalog.ts';
import { eventSubject, type EventEnvelope } from './events.ts';

/**
 * The subject an event is published on: its type's subject (`eventSubject`) and two tokens that say whom it concerns,
 * so that each consumer's one subject filter (NATS 2.9 takes one per consumer) selects the events it acts on and the
 * stream server never sends it the others:
 *
 *   evt.<Noun>.<verb>.v<version>.<party>.<deal>
 *
 * - `party`: `acct` when the event carries an account (webhooks fan out to that account's endpoints, and its calls
 *   count as demand), `anon` when it carries none (an anonymous call, a paid call without a key).
 * - `deal`: `deal` when it can move a deal's step: it names one in `data.origin` (an intent, handoff or execution a
 *   deal made), or it is a capability's success or failure for an account and a VIN (docs/deals.md: it closes the
 *   step that account's one open deal on that VIN awaits); `none` otherwise.
 */
export function eventSubjectOf(e: Pick<EventEnvelope, 'type' | 'account' | 'capability' | 'vin' | 'data'>): string {
  return `${eventSubject(e.type)}.${e.account ? 'acct' : 'anon'}.${movesDeal(e) ? 'deal' : 'none'}`;
}

function movesDeal(e: Pick<EventEnvelope, 'type' | 'account' | 'capability' | 'vin' | 'data'>): boolean {
  const origin = (e.data as { origin?: unknown }).origin;
  if (origin && typeof origin === 'object') return true;
  if (!e.account || !e.vin || !e.capability) return false;
  const when = capabilityByName(e.capability)?.events.find((d) => d.type === e.type)?.when;
  return when === 'success' || when === 'failure';
}

/** The type's subject of a stream subject (`evt.Signing.quoted.v1.acct.none` → `evt.Signing.quoted.v1`). */
export const typeSubjectOf = (subject: string): string => subject.split('.', 4).join('.');

/** Every event of an account: what the services pillar's consumer takes (webhook fan-out, demand). */
export const ACCOUNT_EVENTS = 'evt.*.*.*.acct.*';
/** Every event that can move a deal's step: what the workflows pillar's consumer takes. */
export const DEAL_EVENTS = 'evt.*.*.*.*.deal';
