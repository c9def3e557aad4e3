// Type-level proof, checked by `tsc --noEmit` (part of `pnpm test`): a value cannot be read before narrowing.
import { describe, expectTypeOf, it } from 'vitest';
import type { Answer, SigningStatusValue } from '@vcs/sdk';

declare const a: Answer<SigningStatusValue>;

function readWithoutNarrowing() {
  // @ts-expect-error without narrowing `value` is the union of every arm, so `ceremony` is only `unknown` here.
  return a.value.ceremony.standing;
}

function readAfterNarrowing() {
  if (a.type === 'OFFER') return a.value.settle.path;
  if (a.type !== 'OK') return null;
  return a.value.ceremony.standing;
}

describe('Answer<T> must be narrowed', () => {
  it('types the OK arm only after narrowing', () => {
    expectTypeOf(readAfterNarrowing).returns.toEqualTypeOf<string | null>();
    expectTypeOf(readWithoutNarrowing).toBeFunction();
    expectTypeOf<Answer<SigningStatusValue>['value']>().not.toEqualTypeOf<SigningStatusValue>();
  });
});
