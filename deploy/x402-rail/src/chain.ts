/**
 * The chain: anvil (npm @foundry-rs/anvil's platform package) on 127.0.0.1 with Base Sepolia's chain id, the test
 * token at Base Sepolia's USDC address, Multicall3 at its usual address, and test USDC minted to the payers.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  createNonceManager,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  publicActions,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { compileToken } from './compile.ts';

export const CHAIN_ID = 84532;
export const NETWORK = `eip155:${CHAIN_ID}` as const;
/** The same network as x402 v1 names it. */
export const V1_NETWORK = 'base-sepolia';
/** Base Sepolia's USDC: offers name exactly what they name there, and stock clients' default-asset tables know it. */
export const BASE_SEPOLIA_USDC: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** The payee: a fixed address nothing else on the chain touches, so its balance is what was paid to it. */
export const PAY_TO: Address = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** anvil's well-known dev keys (mnemonic "test test ... junk"): for this local chain only. */
export const KEYS = {
  facilitator: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', // #0: pays the gas of settlements
  payer: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', // #1: the first payer
  deployer: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', // #2: mints
} as const satisfies Record<string, Hex>;

export function localChain(rpcUrl: string) {
  return defineChain({
    id: CHAIN_ID,
    name: `anvil-${CHAIN_ID}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

const require = createRequire(import.meta.url);
const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': 'linux-amd64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-amd64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-amd64',
};

/**
 * The anvil binary from @foundry-rs/anvil's optional platform package (a dependency of that package, so resolved
 * from it).
 */
export function anvilBinary(): string {
  const suffix = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!suffix) throw new Error(`@foundry-rs/anvil ships no binary for ${process.platform}-${process.arch}`);
  const fromAnvil = createRequire(require.resolve('@foundry-rs/anvil/package.json'));
  const pkg = fromAnvil.resolve(`@foundry-rs/anvil-${suffix}/package.json`);
  return join(dirname(pkg), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

export interface Anvil {
  rpcUrl: string;
  port: number;
  /** Settles when anvil has ended: after stop(), or on its own. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/**
 * anvil is tied to this process by a pipe: the shell stops anvil when its stdin closes, which happens however this
 * process ends (a killed test worker too), so no chain outlives the process that started it. It runs in its own
 * process group, so a terminal's Ctrl-C reaches the launcher, which stops the chain after what depends on it.
 */
const TIED =
  'exec 3<&0; "$0" "$@" </dev/null & pid=$!; ( cat <&3 >/dev/null; kill $pid 2>/dev/null ) >/dev/null 2>&1 & wait $pid';

/** Start anvil on 127.0.0.1: `port` 0 (the default) takes a free port, read from anvil's "Listening on" line. */
export async function startAnvil({ port = 0 }: { port?: number } = {}): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(CHAIN_ID)];
  const child =
    process.platform === 'win32'
      ? spawn(anvilBinary(), args, { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', TIED, anvilBinary(), ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-2000);
  });
  const listening = new Promise<number>((resolve, reject) => {
    let head = '';
    let found = false;
    child.stdout.on('data', (b: Buffer) => {
      if (found) return; // after that line anvil logs every call: read and dropped
      head += b.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(head);
      if (m) {
        found = true;
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`anvil exited (${code}) before listening: ${stderr.trim() || head.slice(-500)}`)),
    );
    // Generous: on a loaded 2-core CI machine a cold start of anvil has taken over 10 s.
    setTimeout(() => reject(new Error('anvil did not listen within 30 s')), 30_000).unref();
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const actual = await listening;
    return { rpcUrl: `http://127.0.0.1:${actual}`, port: actual, exited, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface Chain {
  asset: Address;
  balanceOf(address: Address): Promise<bigint>;
  mint(to: Address, amount: bigint): Promise<void>;
  /** Whether `from` has used (or cancelled) the EIP-3009 authorization `nonce`: the token's own record of a payment. */
  authorizationUsed(from: Address, nonce: Hex): Promise<boolean>;
}

/**
 * Put the token at Base Sepolia's USDC address and Multicall3 at its own with anvil_setCode (no deployment
 * transactions: neither keeps constructor state), then mint `mintEach` to every payer.
 * Multicall3 matters: @x402/evm diagnoses a failed simulation through it (nonce used, balance, name, version);
 * without it every such failure reads `invalid_exact_evm_transaction_simulation_failed`.
 */
export async function setUpChain({
  rpcUrl,
  payers,
  mintEach,
}: {
  rpcUrl: string;
  payers: Address[];
  mintEach: bigint;
}): Promise<Chain> {
  const { abi, deployedBytecode } = await compileToken();
  const chain = localChain(rpcUrl);
  const reader = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  const deployer = createWalletClient({
    // A nonce manager of this chain's own: viem's shared one remembers nonces per address and chain id, so a second
    // rail in the same process (same keys, same chain id, a fresh chain) would send nonces the new chain waits for.
    account: privateKeyToAccount(KEYS.deployer, { nonceManager: createNonceManager({ source: jsonRpc() }) }),
    chain,
    transport: http(rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  // Multicall3's runtime code: what its creation code (shipped in viem) returns when run as a call.
  const multicall3 = (await reader.request({
    method: 'eth_call',
    params: [{ data: multicall3Creation() }, 'latest'],
  })) as Hex;
  const anvil = createTestClient({ mode: 'anvil', chain, transport: http(rpcUrl) });
  await Promise.all([
    anvil.setCode({ address: BASE_SEPOLIA_USDC, bytecode: deployedBytecode }),
    anvil.setCode({ address: MULTICALL3, bytecode: multicall3 }),
  ]);
  const mint = async (to: Address, amount: bigint) => {
    const hash = await deployer.writeContract({
      address: BASE_SEPOLIA_USDC,
      abi,
      functionName: 'mint',
      args: [to, amount],
    });
    // anvil mines each transaction as it arrives: the receipt is there at once (waiting would poll for it)
    const r = await deployer.getTransactionReceipt({ hash }).catch(() => deployer.waitForTransactionReceipt({ hash }));
    if (r.status !== 'success') throw new Error(`mint to ${to} reverted (${hash})`);
  };
  await Promise.all(payers.map((p) => mint(p, mintEach)));
  return {
    asset: BASE_SEPOLIA_USDC,
    mint,
    balanceOf: async (address) =>
      (await reader.readContract({
        address: BASE_SEPOLIA_USDC,
        abi,
        functionName: 'balanceOf',
        args: [address],
      })) as bigint,
    authorizationUsed: async (from, nonce) =>
      (await reader.readContract({
        address: BASE_SEPOLIA_USDC,
        abi,
        functionName: 'authorizationState',
        args: [from, nonce],
      })) as boolean,
  };
}

/** viem ships Multicall3's creation code but does not export it: read from its CommonJS build. */
function multicall3Creation(): Hex {
  const viemMain = require.resolve('viem'); // …/viem/_cjs/index.js
  return (require(join(dirname(viemMain), 'constants', 'contracts.js')) as { multicall3Bytecode: Hex })
    .multicall3Bytecode;
}
