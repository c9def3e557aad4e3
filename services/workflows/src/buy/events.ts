import {
  capabilityByName,
  isLeased,
  eventEnvelope,
  eventSubject,
  parsePlatformEvent,
  typeSubjectOf,
  type EventEnvelope,
} from '@vcs/contract';
import { dec, inSpan, SpanKind, type EventDelivery, type Services } from '@vcs/platform';
import { buyChecklist } from './checklist.ts';
import type { DealMachine } from './machine.ts';
import { loadDeal, openDealsFor } from './store.ts';

/** What an event means for the current step of a deal. */
type Verdict = { type: 'OK' | 'BLOCKED'; answers?: string; code?: string; message?: string };
type Handled = 'ack' | 'retry';

const stepCapabilities = new Set(buyChecklist.map((s) => s.capability).filter(Boolean) as string[]);
/** The platform events that name a deal's step in their `origin` (contract platformEvents), the only ones it reads. */
const originEvents = ['Intent.settled@1', 'Handoff.completed@1', 'Handoff.refused@1', 'Execution.finished@1'] as const;
/**
 * The types' subjects a deal can move on: those events, and the success and failure events of the steps' capabilities.
 * The consumer's filter (DEAL_EVENTS) already keeps away every event that moves no deal; of those it is sent, the
 * outcomes of capabilities no step runs are acked from their subject alone, never parsed.
 */
const dealSubjects = new Set([
  ...originEvents.map(eventSubject),
  ...[...stepCapabilities].flatMap((name) =>
    capabilityByName(name)!
      .events.filter((d) => d.when === 'success' || d.when === 'failure')
      .map((d) => eventSubject(d.type)),
  ),
]);
const movesDeals = (subject: string) => dealSubjects.has(typeSubjectOf(subject));
const okAnswer = (t: string) => t === 'OK' || t === 'EMPTY';

/**
 * Completion events move deals on: Intent.settled / Handoff.completed (and their failures) name the
 * deal in `origin`; a capability's own success or failure events count for the account's open deals on that VIN.
 */
export async function onEvent(s: Services, machine: DealMachine, e: EventEnvelope): Promise<Handled> {
  if (e.type.startsWith('Deal.')) return 'ack';
  const p = parsePlatformEvent(e, ...originEvents);
  if (p) {
    const { origin } = p.data;
    if (!origin) return 'ack';
    if (p.type === 'Execution.finished@1') {
      // A deal step's own execution finished (perhaps taken up by commerce's reconciler): its running step is closed.
      if (p.data.source !== 'deal') return 'ack';
      const attempt = Number(p.data.sourceId.split(':').pop());
      const t = p.data.answerType;
      const answers = p.data.answers ?? undefined; // what the machine itself records from the answer
      const verdict: Verdict = okAnswer(t)
        ? { type: 'OK', answers }
        : { type: 'BLOCKED', answers, code: 'execution-failed', message: `${p.data.capability} answered ${t}` };
      return settle(
        s,
        machine,
        origin.dealId,
        (step) => step.position === origin.step && step.attempts === attempt,
        verdict,
        e,
        false,
        true,
      );
    }
    const pendingId = p.type === 'Intent.settled@1' ? p.data.intentId : p.data.handoffId;
    const verdict: Verdict =
      p.type === 'Intent.settled@1'
        ? okAnswer(p.data.answerType)
          ? { type: 'OK', answers: p.data.answerType }
          : {
              type: 'BLOCKED',
              answers: p.data.answerType,
              code: 'execution-failed',
              message: `the settled ${p.data.capability} answered ${p.data.answerType}`,
            }
        : p.type === 'Handoff.completed@1'
          ? { type: 'OK' }
          : { type: 'BLOCKED', code: 'human-refused', message: `Handoff.refused for ${pendingId}` };
    return settle(
      s,
      machine,
      origin.dealId,
      (step) => step.position === origin.step && (step.pending?.id === pendingId || isLeased('dealStep', step.status)),
      verdict,
      e,
    );
  }
  if (!e.capability || !stepCapabilities.has(e.capability) || !e.account || !e.vin) return 'ack';
  const decl = capabilityByName(e.capability)?.events.find((d) => d.type === e.type);
  if (!decl || (decl.when !== 'success' && decl.when !== 'failure')) return 'ack';
  const verdict: Verdict =
    decl.when === 'success'
      ? { type: 'OK' }
      : { type: 'BLOCKED', code: 'execution-failed', message: `${e.capability} emitted ${e.type}` };
  // Only an event that happened after the step was started can complete it; a running step never
  // waits on its own events (the runner records it), so only `awaiting` steps are matched here.
  const waits = (step: StepOf) =>
    step.capability === e.capability &&
    step.status === 'awaiting' &&
    !!step.startedAt &&
    Date.parse(e.occurredAt) >= Date.parse(step.startedAt);
  const candidates: string[] = [];
  for (const dealId of await openDealsFor(s.db, e.account, e.vin)) {
    const d = await loadDeal(s.db, dealId);
    const step = d?.current_step ? d.checklist[d.current_step - 1] : undefined;
    if (step && waits(step)) candidates.push(dealId);
  }
  // The event names no deal: it is attributed only when exactly one deal of the account waits on it for
  // this VIN; otherwise the origin-carrying Intent/Handoff events decide.
  if (candidates.length !== 1) return 'ack';
  return settle(s, machine, candidates[0]!, waits, verdict, e, false);
}

type StepOf = NonNullable<Awaited<ReturnType<typeof loadDeal>>>['checklist'][number];

/** Close the deal's current step if `matches`; then run the free steps that follow. */
async function settle(
  s: Services,
  machine: DealMachine,
  dealId: string,
  matches: (step: StepOf) => boolean,
  verdict: Verdict,
  e: EventEnvelope,
  retryWhileRunning = true,
  closesRunning = false,
): Promise<Handled> {
  const moved = await s.db.tx(async (q) => {
    const d = await loadDeal(q, dealId, { lock: true });
    if (!d || !d.current_step) return 'no' as const;
    const step = d.checklist[d.current_step - 1]!;
    if (!matches(step)) return 'no' as const;
    // A running step is leased to its runner (the lifecycle table): the offer or handoff answered before its step was
    // recorded as awaiting: look again shortly.
    const leased = isLeased('dealStep', step.status);
    if (leased && !closesRunning) return retryWhileRunning ? ('retry' as const) : ('no' as const);
    if (step.status !== 'awaiting' && !(closesRunning && leased)) return 'no' as const;
    // A step whose runner may still answer (its own record carries the capability's code) is left to it for twice
    // the bus time-out; the event closes a step only once its runner is in doubt. Until then: look again shortly.
    if (
      leased &&
      step.startedAt &&
      s.clock.now().getTime() - Date.parse(step.startedAt) < 2 * s.settings.BUS_TIMEOUT_MS
    )
      return 'retry' as const;
    await machine.finish(q, d, step, verdict, s.clock.now());
    return verdict.type === 'OK' ? ('yes' as const) : ('no' as const);
  });
  if (moved === 'retry') return 'retry';
  if (moved === 'yes') await machine.runFree(dealId);
  return 'ack';
}

/** The consumer's handler: parse, act, ack; a transient failure is redelivered. */
export function dealEventHandler(s: Services, machine: DealMachine) {
  return async (d: EventDelivery) => {
    if (!movesDeals(d.subject)) {
      d.ack();
      return;
    }
    let e: EventEnvelope;
    try {
      e = eventEnvelope.parse(JSON.parse(dec.decode(d.data)));
    } catch {
      d.ack();
      return;
    }
    try {
      // The event's trace (its traceparent header) continues into the step it moves and the calls that step makes.
      const r = await inSpan(
        `deal event ${e.type}`,
        SpanKind.CONSUMER,
        d.headers?.traceparent,
        { 'messaging.system': 'nats', 'messaging.message.id': e.id },
        () => onEvent(s, machine, e),
      );
      if (r === 'retry' && d.redeliveryCount < 50) d.nak(300);
      else d.ack();
    } catch (err) {
      s.log.warn({ err, event: e.type }, 'deal event handling failed; redelivering');
      d.nak(1000);
    }
  };
}
