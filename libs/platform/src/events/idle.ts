/**
 * Work in the background that can say when it has nothing left (p-queue's `onIdle`: a promise, resolved as the
 * queue empties, never by a timer), and counts what it has done, so a caller sees whether a wait found any work.
 * The outbox relay, the memory bus's consumers and the webhook sender are such work.
 */
export interface Idles {
  onIdle(): Promise<void>;
  /** Units of work finished since start: rows relayed, deliveries acked, attempts made. */
  readonly done: number;
}

export const isIdles = <T>(x: T): x is T & Idles =>
  typeof (x as Idles | undefined)?.onIdle === 'function' && typeof (x as Idles).done === 'number';

/**
 * Waiters on a worker that goes in rounds (a relay's flushes, a sender's polls): each waits for the first round begun
 * after it asked to end idle, so work committed before the ask is covered.
 */
export class IdleRounds {
  private begun = 0;
  private waiters: { after: number; resolve: () => void }[] = [];

  /** A waiter for the next round to end idle (the caller then starts a round). */
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ after: this.begun, resolve }));
  }

  /** A round begins; its number, to pass to `idle` when it ends with nothing left. */
  begin(): number {
    return ++this.begun;
  }

  /** Round `round` ended idle: every waiter that asked before it began is answered (Infinity: all, at a stop). */
  idle(round: number) {
    const woken = this.waiters.filter((w) => w.after < round);
    this.waiters = this.waiters.filter((w) => w.after >= round);
    for (const w of woken) w.resolve();
  }
}

/**
 * Resolves once the work written so far has gone all the way through: each part is idle in turn, round after round,
 * until a round in which none did anything (the parts feed each other: an event makes a delivery, a delivery that
 * fails writes an event). Tests wait on this instead of polling for an outcome (docs/decisions.md, "Events, the
 * outbox and consumers").
 */
export async function settled(parts: Idles[]): Promise<void> {
  const work = () => parts.reduce((n, p) => n + p.done, 0);
  for (;;) {
    const before = work();
    for (const p of parts) await p.onIdle();
    if (work() === before) return;
  }
}
