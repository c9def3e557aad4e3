// @vcs/sdk: one export per noun (generated), workflow functions (generated), and the fetch-only runtime.
export * from './runtime.ts';
export * from './suite.ts';
export * from './generated/catalog.ts';
export * from './generated/nouns.ts';
export * from './generated/workflows.ts';
export * from './generated/platform.ts';
export type * from './generated/types.ts';
