import { describe, expect, it } from 'vitest';
import { framedReply, unframeReply } from './call.ts';

const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

describe('bus/call.ts: the reply frame', () => {
  it('reads back status, kind, replica, replayed, the answer and the members beside it', () => {
    const cases = [
      { replayed: false, members: undefined },
      { replayed: true, members: undefined },
      { replayed: false, members: '{"intentId":"pi_1"}' },
      { replayed: true, members: '{"receipt":{"id":"pay_1"},"note":"a\\nb"}' },
    ];
    for (const c of cases) {
      const answer = '{"type":"OK","value":{"text":"two\\nlines"}}';
      const framed = framedReply(
        { status: 200, kind: 'OK', servedBy: 'commerce@1/h/1', replayed: c.replayed },
        answer,
        c.members,
      );
      const r = unframeReply(framed)!;
      expect(r).toMatchObject({ status: 200, kind: 'OK', servedBy: 'commerce@1/h/1' });
      expect(!!r.replayed).toBe(c.replayed);
      expect(text(r.body)).toBe(answer);
      expect(text(r.members)).toBe(c.members);
    }
  });

  it('refuses what is not a frame', () => {
    for (const bad of ['no newline', '200 OK x extra flags\n{}', '700 OK x\n{}', '200 OK x members replayed\n{}\n{}'])
      expect(unframeReply(Buffer.from(bad)), bad).toBeNull();
  });
});
