/**
 * The money's one model: every state of an intent, a payment, an execution, a handoff and a deal step, and every
 * move between them, written once as data (state × event → next state, with what the move does). Every status
 * write asks this table (`nextState`), so a move it does not list cannot happen; docs/money.md's diagram is drawn
 * from it (`lifecycleDiagram`), and test/lifecycles.test.ts walks it. Why a table of our own and not XState or
 * DBOS: docs/decisions.md, "The money's one model".
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
  states: readonly S[];
  initial: S;
  /** States nothing leaves. */
  final: readonly S[];
  transitions: readonly Transition<S, E>[];
}

const lifecycle = <S extends string, E extends string>(l: Lifecycle<S, E>) => l;

export const lifecycles = {
  intent: lifecycle({
    table: 'intents',
    states: ['pending', 'settling', 'settled', 'failed', 'expired'],
    initial: 'pending',
    final: ['settled', 'failed'],
    transitions: [
      {
        from: ['pending'],
        event: 'claim',
        to: 'settling',
        effects: 'a key, Accept-Price or a Mandate settles it: its execution is made and claimed',
      },
      {
        from: ['pending', 'expired'],
        event: 'pay',
        to: 'settling',
        effects:
          'its payment proven on chain: charged and payment recorded, the paying account bound, its execution made',
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
        event: 'succeed',
        to: 'settled',
        effects: 'the answer stored once, Intent.settled@1 written, the settlement counted',
      },
      {
        from: ['settling'],
        event: 'fail',
        to: 'failed',
        effects: 'the BLOCKED answer stored, Intent.settled@1 written, a mandate reservation given back',
      },
    ],
  }),
  payment: lifecycle({
    table: 'payments',
    states: ['settling', 'unknown', 'settled', 'refused', 'released', 'expired'],
    initial: 'settling',
    final: ['settled', 'expired'],
    transitions: [
      {
        from: ['settling', 'unknown'],
        event: 'prove',
        to: 'settled',
        effects: 'the facilitator settled it, or the chain says the authorization is used: the intent is paid',
      },
      {
        from: ['settling'],
        event: 'doubt',
        to: 'unknown',
        effects:
          'no clear answer (time-out, reset, 5xx, settlement_pending, a reason we do not know): decided from the chain',
      },
      {
        from: ['settling'],
        event: 'refuse',
        to: 'refused',
        effects: 'the facilitator refused it before broadcasting and the chain says unused: 402 with the reason',
      },
      {
        from: ['settling'],
        event: 'release',
        to: 'released',
        effects: 'the facilitator was never reached (connection refused): nothing sent, the same payment may come back',
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
        from: ['refused', 'released'],
        event: 'rebind',
        to: 'settling',
        effects: 'the same authorization presented again for its intent: sent to the facilitator again',
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
    states: ['running', 'ready', 'succeeded', 'failed'],
    initial: 'running',
    final: ['succeeded', 'failed'],
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
        effects: 'OK or EMPTY recorded once, its source finished in the same transaction',
      },
      {
        from: ['ready', 'running'],
        event: 'fail',
        to: 'failed',
        effects: 'a BLOCKED answer recorded once, its source finished in the same transaction',
      },
    ],
  }),
  handoff: lifecycle({
    table: 'handoffs',
    states: ['pending', 'completing', 'completed', 'refused'],
    initial: 'pending',
    final: ['completed', 'refused'],
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
  dealStep: lifecycle({
    table: 'deals (checklist)',
    states: ['todo', 'running', 'awaiting', 'done', 'failed'],
    initial: 'todo',
    final: ['done'],
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
} as const;

export type Lifecycles = typeof lifecycles;
export type Entity = keyof Lifecycles;
export type StateOf<K extends Entity> = Lifecycles[K]['states'][number];
export type EventOf<K extends Entity> = Lifecycles[K]['transitions'][number]['event'];

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

/** docs/money.md's diagrams: one mermaid stateDiagram per entity, drawn from the table. */
export function lifecycleDiagram(): string {
  const out: string[] = [];
  for (const [name, l] of Object.entries(lifecycles) as [Entity, Lifecycle<string, string>][]) {
    out.push(`### ${name} (${l.table})`, '', '```mermaid', 'stateDiagram-v2');
    out.push(`  [*] --> ${l.initial}`);
    for (const t of l.transitions) for (const f of t.from) out.push(`  ${f} --> ${t.to}: ${t.event}`);
    for (const f of l.final) out.push(`  ${f} --> [*]`);
    out.push('```', '', '| from | event | to | what it does |', '|---|---|---|---|');
    for (const t of l.transitions) out.push(`| ${t.from.join(', ')} | ${t.event} | ${t.to} | ${t.effects} |`);
    out.push('');
  }
  return out.join('\n');
}
