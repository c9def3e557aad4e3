#!/usr/bin/env node
// The `vcs` bin: loads the TypeScript CLI through tsx (the workspace runs TypeScript sources directly).
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
