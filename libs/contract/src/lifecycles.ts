/**
 * The money's one model: every state of an intent, a payment, an execution, a handoff, a deal and its steps, and an
 * API key, and every move between them, written once as data (state × event → next state, with what the move
 * does), with the guards the code asks instead of comparing states itself: which states are final (a claim replays
 * what they hold), which are in flight (a claim waits on the work under way), and which are held under a lease (taken
 * by another only once it ran out: `leaseRunOut`, the one comparison). Every status write asks this table
 * (`nextState`, or commerce's `move` built on `edgeOf`), so a move it does not list cannot happen; docs/money.md's
 * diagram is drawn from it (`lifecycleDiagram`), lifecycles.test.ts walks it, and test/status-writes.test.ts fails on
 * a status written any other way. Why a table of our own and not XState or DBOS: docs/decisions.md, "The money's
 * one model".
 */

export interface Transition<S extends string, E extends string> {
  from: readonly S[];
  event: E;
  to: S;
  /** What the move does beside the status, in the same transaction (for readers and the diagram's notes). */
  effects: string;
}

export interface Lifecycle<S extends string, E extends string> {
  /** The table a row lives in (or, for a deal step, the record that holds it). */
  table: string;
  /** The column that holds the state. */
  column: string;
  states: readonly S[];
  initial: S;
  /** States nothing leaves: a claim on a record in one answers what it holds. */
  final: readonly S[];
  /** States of work under way: a claim waits on that work (or, leased, takes it over once its lease ran out). */
  inFlight: readonly S[];
  /** In-flight states held under a lease (`lease_until`): another may take the record only once it ran out. */
  leased: readonly S[];
  transitions: readonly Transition<S, E>[];
}

/** One entity's table, its literals kept (states, events, guards): lifecycles.test.ts checks each names its states. */
const lifecycle = <const L extends Lifecycle<string, string>>(l: L): L => l;

export const lifecycles = {
  intent: lifecycle({
    table: 'intents',
    column: 'status',
    states: ['pending', 'settling', 'charging', 'settled', 'failed', 'expired'],
    initial: 'pending',
    final: ['settled', 'failed', 'expired'],
    inFlight: ['settling', 'charging'],
    leased: [],
    transitions: [
      {
        from: ['pending'],
        event: 'claim',
        to: 'settling',
        effects: 'a key, Accept-Price or a Mandate settles it: its execution is made and claimed',
      },
      {
        from: ['pending'],
        event: 'pay',
        to: 'settling',
        effects:
          'an x402 payment verified by the facilitator is held for it (nothing moved): the paying account bound, ' +
          'its execution made and claimed',
      },
      {
        from: ['pending'],
        event: 'decline',
        to: 'failed',
        effects: 'sandbox offer-declined: the refusal stored as its answer',
      },
      { from: ['pending'], event: 'expire', to: 'expired', effects: 'past expiresAt with nothing bound' },
      {
        from: ['settling'],
        event: 'charge',
        to: 'charging',
        effects:
          'its paid execution answered with what the price is for (OK; EMPTY when the price is for an act): the ' +
          'answer stored and withheld, its payment sent to settle',
      },
      {
        from: ['settling'],
        event: 'succeed',
        to: 'settled',
        effects:
          'OK or EMPTY, charged nothing (a simulated settlement, or an EMPTY answer where the price is for an ' +
          'answer: its payment voided): the answer stored once, Intent.settled@1 written, the settlement counted',
      },
      {
        from: ['charging'],
        event: 'collect',
        to: 'settled',
        effects:
          'its payment proven on chain: the answer released with its receipt and charge, Intent.settled@1 written, ' +
          'the settlement counted',
      },
      {
        from: ['settling'],
        event: 'fail',
        to: 'failed',
        effects:
          'a BLOCKED answer, charged nothing (its payment voided): stored, Intent.settled@1 written, a mandate ' +
          'reservation given back',
      },
      {
        from: ['charging'],
        event: 'withhold',
        to: 'failed',
        effects:
          'its payment refused at settlement, or expired unused on chain: nothing moved, the answer withheld, ' +
          'the refusal stored',
      },
    ],
  }),
  payment: lifecycle({
    table: 'payments',
    column: 'status',
    states: ['held', 'settling', 'unknown', 'settled', 'voided', 'refused', 'expired'],
    initial: 'held',
    final: ['settled', 'voided', 'refused', 'expired'],
    inFlight: ['held', 'settling', 'unknown'],
    leased: ['settling', 'unknown'],
    transitions: [
      {
        from: ['held'],
        event: 'send',
        to: 'settling',
        effects: "its intent's answer is worth its price: sent to the facilitator under a lease",
      },
      {
        from: ['held'],
        event: 'void',
        to: 'voided',
        effects:
          "its intent's answer is not worth its price (BLOCKED, or EMPTY when the price is for an answer): " +
          'never sent, nothing moves',
      },
      {
        from: ['settling', 'unknown'],
        event: 'prove',
        to: 'settled',
        effects: 'the facilitator settled it, or the chain says the authorization is used: its intent collects',
      },
      {
        from: ['settling'],
        event: 'doubt',
        to: 'unknown',
        effects:
          'no clear answer (time-out, reset, 5xx, settlement_pending, the facilitator unreachable, a reason we do ' +
          'not know): decided from the chain',
      },
      {
        from: ['settling'],
        event: 'refuse',
        to: 'refused',
        effects:
          'the facilitator refused its first send before broadcasting, and the chain says unused: its intent ' +
          'withholds the answer',
      },
      {
        from: ['unknown', 'settling'],
        event: 'resubmit',
        to: 'settling',
        effects:
          'unused on chain, still valid, its lease run out (its sender died or gave up): the same authorization ' +
          'sent again under a new lease (the nonce makes it once)',
      },
      {
        from: ['settling', 'unknown'],
        event: 'expire',
        to: 'expired',
        effects: 'the chain has a block past validBefore with the nonce unused: it can never move money',
      },
    ],
  }),
  execution: lifecycle({
    table: 'executions',
    column: 'status',
    states: ['running', 'ready', 'succeeded', 'failed'],
    initial: 'running',
    final: ['succeeded', 'failed'],
    inFlight: ['running'],
    leased: ['running'],
    transitions: [
      {
        from: ['ready', 'running'],
        event: 'claim',
        to: 'running',
        effects: 'taken under a new lease (a running one only once its lease ran out); attempts + 1',
      },
      {
        from: ['running'],
        event: 'unreached',
        to: 'ready',
        effects: 'its pillar certainly not reached (no responders): nothing ran, ready again after a short pause',
      },
      {
        from: ['ready', 'running'],
        event: 'succeed',
        to: 'succeeded',
        effects: 'OK or EMPTY recorded once, its source finished in the same statement',
      },
      {
        from: ['ready', 'running'],
        event: 'fail',
        to: 'failed',
        effects: 'a BLOCKED answer recorded once, its source finished in the same statement',
      },
    ],
  }),
  handoff: lifecycle({
    table: 'handoffs',
    column: 'status',
    states: ['pending', 'completing', 'completed', 'refused'],
    initial: 'pending',
    final: ['completed', 'refused'],
    inFlight: ['completing'],
    leased: [],
    transitions: [
      {
        from: ['pending'],
        event: 'complete',
        to: 'completed',
        effects: 'a human act with no capability behind it: Handoff.completed@1',
      },
      {
        from: ['pending'],
        event: 'run',
        to: 'completing',
        effects: "the human completed it: the capability's execution made and claimed",
      },
      {
        from: ['completing'],
        event: 'finish',
        to: 'completed',
        effects: 'its execution recorded an answer: the result stored, Handoff.completed@1',
      },
      { from: ['pending'], event: 'refuse', to: 'refused', effects: 'the human refused: Handoff.refused@1' },
    ],
  }),
  deal: lifecycle({
    table: 'deals',
    column: 'state',
    states: ['OPENED', 'IN_PROGRESS', 'AWAITING_PAYMENT', 'AWAITING_HUMAN', 'STEP_FAILED', 'SETTLED'],
    initial: 'OPENED',
    final: ['SETTLED'],
    inFlight: ['IN_PROGRESS', 'AWAITING_PAYMENT', 'AWAITING_HUMAN'],
    leased: [],
    transitions: [
      {
        from: ['OPENED', 'IN_PROGRESS', 'STEP_FAILED'],
        event: 'start',
        to: 'IN_PROGRESS',
        effects: 'a step claimed: Deal.stepStarted@1',
      },
      {
        from: ['IN_PROGRESS'],
        event: 'awaitPayment',
        to: 'AWAITING_PAYMENT',
        effects: "its step's offer opened",
      },
      { from: ['IN_PROGRESS'], event: 'awaitHuman', to: 'AWAITING_HUMAN', effects: "its step's handoff opened" },
      {
        from: ['IN_PROGRESS', 'AWAITING_PAYMENT', 'AWAITING_HUMAN'],
        event: 'proceed',
        to: 'IN_PROGRESS',
        effects: 'a step done with more to go: Deal.stepCompleted@1',
      },
      {
        from: ['IN_PROGRESS', 'AWAITING_PAYMENT', 'AWAITING_HUMAN'],
        event: 'fail',
        to: 'STEP_FAILED',
        effects: 'a step failed: Deal.stepFailed@1; an advance retries it',
      },
      {
        from: ['IN_PROGRESS', 'AWAITING_PAYMENT', 'AWAITING_HUMAN'],
        event: 'settle',
        to: 'SETTLED',
        effects: 'its last step done: Deal.stepCompleted@1 and Deal.settled@1',
      },
    ],
  }),
  dealStep: lifecycle({
    table: 'deals (checklist)',
    column: 'status',
    states: ['todo', 'running', 'awaiting', 'done', 'failed'],
    initial: 'todo',
    final: ['done'],
    inFlight: ['running', 'awaiting'],
    leased: ['running'],
    transitions: [
      {
        from: ['todo', 'failed', 'running'],
        event: 'claim',
        to: 'running',
        effects: 'Deal.stepStarted@1 (a running step only once its lease ran out: same attempt, same execution)',
      },
      {
        from: ['running'],
        event: 'await',
        to: 'awaiting',
        effects: 'its offer or handoff opened: the deal waits for payment or a human',
      },
      {
        from: ['running', 'awaiting'],
        event: 'succeed',
        to: 'done',
        effects: 'Deal.stepCompleted@1; the deal moves to its next step or SETTLED',
      },
      { from: ['running', 'awaiting'], event: 'fail', to: 'failed', effects: 'Deal.stepFailed@1' },
    ],
  }),
  key: lifecycle({
    table: 'api_keys',
    column: 'status',
    states: ['active', 'superseded', 'revoked'],
    initial: 'active',
    final: ['revoked'],
    inFlight: [],
    leased: [],
    transitions: [
      {
        from: ['active'],
        event: 'supersede',
        to: 'superseded',
        effects: 'rotated: its successor minted, it works beside it until its grace ends (ApiKey.rotated@1)',
      },
      {
        from: ['active', 'superseded'],
        event: 'revoke',
        to: 'revoked',
        effects: 'revoked: refused from now on (ApiKey.revoked@1)',
      },
    ],
  }),
} as const;

export type Lifecycles = typeof lifecycles;
export type Entity = keyof Lifecycles;
export type StateOf<K extends Entity> = Lifecycles[K]['states'][number];
export type EventOf<K extends Entity> = Lifecycles[K]['transitions'][number]['event'];
export type InFlightOf<K extends Entity> = Lifecycles[K]['inFlight'][number];

/** A move the table does not list: a bug, never a business outcome. */
export class IllegalTransition extends Error {
  constructor(
    readonly entity: Entity,
    readonly from: string,
    readonly event: string,
  ) {
    super(`${entity}: no transition for event ${event} from ${from} (libs/contract/src/lifecycles.ts)`);
    this.name = 'IllegalTransition';
  }
}

function transitionOf(entity: Entity, event: string) {
  const t = (lifecycles[entity].transitions as readonly Transition<string, string>[]).find((x) => x.event === event);
  if (!t) throw new IllegalTransition(entity, '(any)', event);
  return t;
}

/** The state `event` moves `entity` to from `from`; throws IllegalTransition for a move the table does not list. */
export function nextState<K extends Entity>(entity: K, from: string, event: EventOf<K>): StateOf<K> {
  const t = transitionOf(entity, event);
  if (!t.from.includes(from)) throw new IllegalTransition(entity, from, event);
  return t.to as StateOf<K>;
}

/** The states `event` may move `entity` from, and the state it moves to: what a conditional UPDATE is made of. */
export function edgeOf<K extends Entity>(entity: K, event: EventOf<K>): { from: StateOf<K>[]; to: StateOf<K> } {
  const t = transitionOf(entity, event);
  return { from: [...t.from] as StateOf<K>[], to: t.to as StateOf<K> };
}

const has = (states: readonly string[], s: string) => states.includes(s);
/** Nothing leaves `state`: what the record holds is its outcome. */
export const isFinal = <K extends Entity>(entity: K, state: string): boolean => has(lifecycles[entity].final, state);
/** Work is under way on a record in `state` (for a payment: money may be moving or about to). */
export const isInFlight = <K extends Entity>(entity: K, state: string): state is InFlightOf<K> =>
  has(lifecycles[entity].inFlight, state);
/** A record in `state` is held under a lease: taken by another only once it ran out. */
export const isLeased = <K extends Entity>(entity: K, state: string): boolean => has(lifecycles[entity].leased, state);
/** The states of `entity` with work under way, as a list (for SQL: `status = any($n)`). */
export const inFlightStates = <K extends Entity>(entity: K): StateOf<K>[] => [...lifecycles[entity].inFlight];

/** The lease rule, the one comparison: a lease that ends at `until` has run out at `nowMs` (none held: run out). */
export const leaseRunOut = (until: string | Date | null | undefined, nowMs: number): boolean =>
  !until || new Date(until).getTime() <= nowMs;
/** The lease rule in SQL over a row's `lease_until`, `$n` being now: what a conditional UPDATE adds. */
export const leaseRunOutSql = (n: number) => `(lease_until is null or lease_until <= $${n})`;

/**
 * The one claim routine's decision, from the table: what taking a record in `state` (leased until `leaseUntil`) for a
 * new piece of work comes to now.
 * - `final`: nothing leaves it; answer what it holds.
 * - `busy`: work is under way under a lease that still runs (or, not leased, the work itself decides): wait on it.
 * - `take`: in flight under a lease that ran out: its worker died or gave up; take it over.
 * - `open`: nothing under way: start the work (the event to move it by is the caller's).
 */
export type ClaimDecision = 'final' | 'busy' | 'take' | 'open';
export function claimOf<K extends Entity>(
  entity: K,
  state: string,
  leaseUntil: string | Date | null | undefined,
  nowMs: number,
): ClaimDecision {
  const l = lifecycles[entity];
  if (has(l.final, state)) return 'final';
  if (!has(l.inFlight, state)) return 'open';
  return has(l.leased, state) && leaseRunOut(leaseUntil, nowMs) ? 'take' : 'busy';
}

/** What a record does for each claim decision: its own actions (each returns what the claim comes to). */
export interface ClaimActions<T> {
  /** `final`: answer what it holds (its stored answer, its refusal). */
  replay: () => T;
  /** `busy`: wait on the work under way (its execution, its payment's sender), or say when to ask again. */
  wait: () => T;
  /** `open`, or in flight under a lease that ran out: take it (a conditional move, so one taker wins). */
  take: (how: 'open' | 'take') => T;
}

/**
 * The one claim routine: the table's decision on a record (`claimOf`) and the record's own action for it. The key
 * route, the paid route, a handoff's completion, an execution's attempt, a payment sent again and a deal step all
 * claim through it; what each does next is its own (`ClaimActions`), the decision is the table's.
 */
export function claimWith<K extends Entity, T>(
  entity: K,
  record: { status: string; lease_until?: string | Date | null },
  nowMs: number,
  actions: ClaimActions<T>,
): T {
  const d = claimOf(entity, record.status, record.lease_until, nowMs);
  if (d === 'final') return actions.replay();
  if (d === 'busy') return actions.wait();
  return actions.take(d);
}

/** docs/money.md's diagrams: one mermaid stateDiagram per entity, drawn from the table, with its guards. */
export function lifecycleDiagram(): string {
  const out: string[] = [];
  for (const [name, l] of Object.entries(lifecycles) as [Entity, Lifecycle<string, string>][]) {
    out.push(`### ${name} (${l.table})`, '', '```mermaid', 'stateDiagram-v2');
    out.push(`  [*] --> ${l.initial}`);
    for (const t of l.transitions) for (const f of t.from) out.push(`  ${f} --> ${t.to}: ${t.event}`);
    for (const f of l.final) out.push(`  ${f} --> [*]`);
    out.push('```', '');
    const list = (s: readonly string[]) => (s.length ? s.join(', ') : 'none');
    out.push(`Final: ${list(l.final)}. In flight: ${list(l.inFlight)}. Under a lease: ${list(l.leased)}.`, '');
    out.push('| from | event | to | what it does |', '|---|---|---|---|');
    for (const t of l.transitions) out.push(`| ${t.from.join(', ')} | ${t.event} | ${t.to} | ${t.effects} |`);
    out.push('');
  }
  return out.join('\n');
}
