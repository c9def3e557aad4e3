import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogDigest } from '@vcs/contract';
import { CATALOG_DIGEST } from '@vcs/sdk';
import { generate, GENERATED_DIR, PACKAGES, stamped } from '../libs/sdk/scripts/generate.ts';

const generated = await generate();

describe('generated SDK', () => {
  it.each(Object.entries(generated))(
    '%s is what `pnpm gen` writes (run it after changing the catalog)',
    (name, text) => {
      expect(readFileSync(join(GENERATED_DIR, name), 'utf8')).toBe(text);
    },
  );
  it('is pinned to the catalog digest', () => {
    expect(CATALOG_DIGEST).toBe(catalogDigest());
  });
  it.each(PACKAGES)('%s is stamped with that digest and its version (`pnpm gen` writes both)', (path) => {
    const text = readFileSync(path, 'utf8');
    expect(JSON.parse(text).catalogDigest).toBe(CATALOG_DIGEST);
    expect(stamped(text, CATALOG_DIGEST)).toBe(text);
  });
  it('imports nothing from node: at runtime', () => {
    for (const f of [
      'runtime.ts',
      'index.ts',
      'generated/nouns.ts',
      'generated/workflows.ts',
      'generated/catalog.ts',
    ]) {
      const src = readFileSync(join(GENERATED_DIR, '..', f), 'utf8');
      expect(src).not.toMatch(/from ['"]node:/);
      expect(src).not.toMatch(/^import (?!type)[^;]*from ['"](?!\.)/m);
    }
  });
});
