/**
 * @vcs/x402-rail: an x402 payment rail on this machine's loopback, offline — anvil with Base Sepolia's chain id, a
 * USDC-like EIP-3009 token at Base Sepolia's USDC address, funded payers, and a self-hosted facilitator over HTTP —
 * for the service's tests, benchmarks and `pnpm start:x402`.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_ID, KEYS, NETWORK, PAY_TO, setUpChain, startAnvil } from './chain.ts';
import { compileToken } from './compile.ts';
import { startFacilitator, type Facilitator } from './facilitator.ts';

export {
  BASE_SEPOLIA_USDC,
  CHAIN_ID,
  KEYS,
  MULTICALL3,
  NETWORK,
  PAY_TO,
  anvilBinary,
  localChain,
  setUpChain,
  startAnvil,
} from './chain.ts';
export {
  buildFacilitator,
  facilitatorSigner,
  startFacilitator,
  type Facilitator,
  type PauseMode,
} from './facilitator.ts';
export { createPayment, payingFetch, receiptOf, type PayingFetchOptions } from './pay.ts';

export interface RailOptions {
  /** How many funded payers (the first is anvil's dev account #1; the rest are fixed keys derived from their index). */
  payers?: number;
  /** Test USDC minted to each payer, in atomic units (6 decimals): 100_000_000n is 100 USDC. */
  mintEach?: bigint;
  /** Ports on 127.0.0.1; 0 or absent: a free one. */
  port?: { rpc?: number; facilitator?: number };
}

export interface Rail {
  rpcUrl: string;
  chainId: typeof CHAIN_ID;
  network: typeof NETWORK;
  /** The token's address (Base Sepolia's USDC address). */
  asset: Address;
  payTo: Address;
  facilitatorUrl: string;
  payerKeys: Hex[];
  payerAddresses: Address[];
  /** The facilitator's controls: pause/resume, loseNextSettleAnswer, stats, and the x402Facilitator itself. */
  facilitator: Facilitator;
  balanceOf(address: Address): Promise<bigint>;
  mint(address: Address, amount: bigint): Promise<void>;
  /**
   * Whether an EIP-3009 authorization (payer, nonce) has been used on chain: how a reconciler learns a lost settle
   * happened.
   */
  authorizationUsed(from: Address, nonce: Hex): Promise<boolean>;
  /**
   * An `exact` requirement for `amount` atomic units on this rail, as a server would offer it (maxTimeoutSeconds
   * 900).
   */
  requirements(amount: bigint | number | string): PaymentRequirements;
  /** true: the facilitator refuses connections; false: it listens again on the same port. */
  setFacilitatorDown(down: boolean): Promise<void>;
  /** Settles when the chain has ended: after stop(), or on its own. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export const payerKey = (i: number): Hex => (i === 0 ? KEYS.payer : keccak256(toHex(`@vcs/x402-rail payer ${i}`)));

export async function startRail({ payers = 1, mintEach = 100_000_000n, port = {} }: RailOptions = {}): Promise<Rail> {
  if (!Number.isInteger(payers) || payers < 1) throw new RangeError(`payers: a whole number from 1 (got ${payers})`);
  const starting = startAnvil({ port: port.rpc });
  void compileToken().catch(() => {}); // compiles while anvil starts; setUpChain reports a failure
  const anvil = await starting;
  try {
    const payerKeys = Array.from({ length: payers }, (_, i) => payerKey(i));
    const payerAddresses = payerKeys.map((k) => privateKeyToAccount(k).address);
    const chain = await setUpChain({ rpcUrl: anvil.rpcUrl, payers: payerAddresses, mintEach });
    const facilitator = await startFacilitator({
      rpcUrl: anvil.rpcUrl,
      privateKey: KEYS.facilitator,
      port: port.facilitator,
    });
    let stopped: Promise<void> | undefined;
    return {
      rpcUrl: anvil.rpcUrl,
      chainId: CHAIN_ID,
      network: NETWORK,
      asset: chain.asset,
      payTo: PAY_TO,
      facilitatorUrl: facilitator.url,
      payerKeys,
      payerAddresses,
      facilitator,
      balanceOf: chain.balanceOf,
      mint: chain.mint,
      authorizationUsed: chain.authorizationUsed,
      requirements: (amount) => ({
        scheme: 'exact',
        network: NETWORK,
        amount: String(amount),
        asset: chain.asset,
        payTo: PAY_TO,
        maxTimeoutSeconds: 900,
        extra: { name: 'USDC', version: '2' },
      }),
      setFacilitatorDown: (down) => (down ? facilitator.pause('refused') : facilitator.resume()),
      exited: anvil.exited,
      stop: () => (stopped ??= facilitator.close().finally(() => anvil.stop())),
    };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}
