import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { createMemoryKv } from './store/kv.ts';

describe('ManualClock', () => {
  it('wakes a sleep only when moved past its deadline, earliest first', async () => {
    const clock = new ManualClock();
    const woke: string[] = [];
    const a = clock.sleep(100).then(() => woke.push('a'));
    const b = clock.sleep(50).then(() => woke.push('b'));
    expect(clock.sleeping).toBe(2);
    clock.advance(49);
    await Promise.resolve();
    expect(woke).toEqual([]);
    clock.advance(60);
    await Promise.all([a, b]);
    expect(woke).toEqual(['b', 'a']);
    expect(clock.sleeping).toBe(0);
  });

  it('ages the embedded key-value store: an entry lives until the clock passes its time to live', async () => {
    const clock = new ManualClock();
    const kv = createMemoryKv(clock);
    await kv.set('k', 'v', 1000);
    clock.advance(999);
    expect(await kv.get('k')).toBe('v');
    clock.advance(2);
    expect(await kv.get('k')).toBeNull();
  });
});
