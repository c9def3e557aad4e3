/**
 * token.sol compiled with solc-js (npm `solc`, its bundled soljson: nothing downloaded) when a rail first starts, so
 * no compiled artefact is committed beside the source it would have to be kept in step with. Kept in memory for the
 * process, and in `deploy/x402-rail/.cache/` (git-ignored) under a hash of the compiler's version, the settings and
 * the source, because loading and running solc-js takes 1 s on an idle machine and 3-5 s on a busy one, in every
 * test file that starts a rail; a changed source or compiler is a new file name, so the cache is never stale.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Abi, Hex } from 'viem';

export interface Compiled {
  solc: string;
  abi: Abi;
  /** Runtime code: the token keeps no constructor state, so this is placed at an address as it is. */
  deployedBytecode: Hex;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { deployedBytecode: { object: string } } }>>;
}

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { TestUSDC: ['abi', 'evm.deployedBytecode.object'] } },
};
const CACHE_DIR = new URL('../.cache/', import.meta.url);

let cached: Promise<Compiled> | undefined;

/** The token, compiled once (per source and compiler version). */
export function compileToken(): Promise<Compiled> {
  cached ??= load().catch((e: unknown) => {
    cached = undefined;
    throw e;
  });
  return cached;
}

async function load(): Promise<Compiled> {
  const content = await readFile(new URL('./token.sol', import.meta.url), 'utf8');
  const { version } = createRequire(import.meta.url)('solc/package.json') as { version: string };
  const key = createHash('sha256')
    .update(JSON.stringify([version, SETTINGS, content]))
    .digest('hex')
    .slice(0, 16);
  const file = new URL(`token-${key}.json`, CACHE_DIR);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Compiled;
  } catch {
    /* not compiled yet */
  }
  const compiled = await compile(content);
  try {
    await mkdir(CACHE_DIR, { recursive: true });
    const tmp = new URL(`token-${key}.${process.pid}.tmp`, CACHE_DIR);
    await writeFile(tmp, JSON.stringify(compiled));
    await rename(tmp, file); // whole or not at all, whoever else compiles at the same time
  } catch {
    /* a read-only checkout compiles each time */
  }
  return compiled;
}

async function compile(content: string): Promise<Compiled> {
  const { default: solc } = await import('solc');
  const input = { language: 'Solidity', sources: { 'token.sol': { content } }, settings: SETTINGS };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length)
    throw new Error(`token.sol does not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = out.contracts?.['token.sol']?.TestUSDC;
  if (!c) throw new Error('token.sol: solc gave no TestUSDC contract');
  return { solc: String(solc.version()), abi: c.abi, deployedBytecode: `0x${c.evm.deployedBytecode.object}` };
}
