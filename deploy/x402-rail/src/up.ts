/**
 * Bring the rail up and keep it until SIGINT or SIGTERM:
 *   tsx deploy/x402-rail/src/up.ts [--payers 1] [--mint 100000000] [--rpc-port 0] [--facilitator-port 0]
 * Prints one JSON line with what a service and a client need (ports: free ones unless given), then "ready".
 */
import { fileURLToPath } from 'node:url';
import { startRail, type Rail, type RailOptions } from './index.ts';

/** The rail's options from `--payers`, `--mint`, `--rpc-port`, `--facilitator-port` (shared with start.ts). */
export function railOptionsFrom(argv: string[], { payers = 1 }: { payers?: number } = {}): RailOptions {
  const opt = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const whole = (name: string, dflt: number) => {
    const raw = opt(name);
    if (raw === undefined) return dflt;
    if (!/^\d+$/.test(raw)) {
      console.error(`--${name}: expected a whole number (got ${JSON.stringify(raw)})`);
      process.exit(2);
    }
    return Number(raw);
  };
  const mint = opt('mint');
  if (mint !== undefined && !/^\d+$/.test(mint)) {
    console.error(`--mint: expected atomic units, a whole number (got ${JSON.stringify(mint)})`);
    process.exit(2);
  }
  return {
    payers: Math.max(1, whole('payers', payers)),
    mintEach: mint === undefined ? undefined : BigInt(mint),
    port: { rpc: whole('rpc-port', 0), facilitator: whole('facilitator-port', 0) },
  };
}

/** What a service and a client need, as one JSON-able object. */
export function summaryOf(rail: Rail) {
  return {
    rpcUrl: rail.rpcUrl,
    chainId: rail.chainId,
    network: rail.network,
    asset: rail.asset,
    payTo: rail.payTo,
    facilitatorUrl: rail.facilitatorUrl,
    facilitatorSigner: rail.facilitator.signer,
    payerKeys: rail.payerKeys,
    payerAddresses: rail.payerAddresses,
  };
}

/** Stop the rail on SIGINT/SIGTERM, then exit. */
export function stopOnSignals(rail: Rail, before: () => Promise<void> = async () => {}) {
  const stop = () => {
    void before()
      .finally(() => rail.stop())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rail = await startRail(railOptionsFrom(process.argv.slice(2)));
  stopOnSignals(rail);
  console.log(JSON.stringify(summaryOf(rail)));
  console.log('ready');
}
