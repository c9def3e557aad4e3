/** Time is injected so tests control it (grace periods, expiries) instead of sleeping. */
export interface Clock { now(): Date }
export const systemClock: Clock = { now: () => new Date() };

export class ManualClock implements Clock {
  constructor(private t = new Date('2026-01-15T12:00:00.000Z')) {}
  now() { return new Date(this.t); }
  advance(ms: number) { this.t = new Date(this.t.getTime() + ms); }
  set(d: Date) { this.t = new Date(d); }
}
