/**
 * Time is injected so tests control it (grace periods, expiries, cache lifetimes, waits) instead of sleeping.
 * `now` is the time; `sleep` waits for this clock's time to pass. Real timers remain only where real time is the
 * point: transport time-outs, poll intervals, measured latencies, CPU budgets (docs/decisions.md, "The contract and
 * the catalog").
 */
export interface Clock {
  now(): Date;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A clock a test moves: `sleep` resolves when `advance` (or `set`) passes its deadline, never on its own. */
export class ManualClock implements Clock {
  private sleepers: { until: number; wake: () => void }[] = [];
  constructor(private t = new Date('2026-01-15T12:00:00.000Z')) {}
  now() {
    return new Date(this.t);
  }
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((wake) => {
      this.sleepers.push({ until: this.t.getTime() + ms, wake });
    });
  }
  advance(ms: number) {
    this.set(new Date(this.t.getTime() + ms));
  }
  set(d: Date) {
    this.t = new Date(d);
    const due = this.sleepers.filter((s) => s.until <= this.t.getTime()).sort((a, b) => a.until - b.until);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t.getTime());
    for (const s of due) s.wake();
  }
  /** How many sleeps are waiting on this clock (a test waits for its subject to be asleep before it moves time). */
  get sleeping() {
    return this.sleepers.length;
  }
}
