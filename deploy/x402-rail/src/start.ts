/**
 * `pnpm start:x402`: the rail, then the embedded service (dist/embedded.js, built by `tsx deploy/build.ts` first, as
 * `pnpm start` does) pointed at it through X402_FACILITATOR_URL, X402_RPC_URL, X402_PAY_TO, X402_NETWORK and
 * X402_ASSET, on a database of its own (.data/pglite-x402 unless PGLITE_DIR says). Prints the funded payers' keys and
 * a command that pays a 402 once the service answers. When the service ends the chain is stopped, and when the chain
 * ends the service is; SIGINT/SIGTERM stop the service first (it drains), then the chain. Exits with the service's
 * code.
 *   pnpm start:x402 [--payers 3] [--mint 100000000] [--rpc-port 0] [--facilitator-port 0]   (PORT, HOST as for start)
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { builtEntryOf, NODE_FLAGS } from '../../launch.ts';
import { startRail } from './index.ts';
import { railOptionsFrom, summaryOf } from './up.ts';

/** start:x402's embedded database directory when PGLITE_DIR is unset (pnpm start's is .data/pglite). */
export const X402_PGLITE_DIR = '.data/pglite-x402';

const argv = process.argv.slice(2);
const entry = builtEntryOf('embedded');
if (!existsSync(entry)) {
  console.error(`${entry} is missing: build first (tsx deploy/build.ts), as pnpm start:x402 does`);
  process.exit(1);
}

const rail = await startRail(railOptionsFrom(argv, { payers: 3 }));
const host =
  process.env.HOST && process.env.HOST !== '0.0.0.0' && process.env.HOST !== '::' ? process.env.HOST : '127.0.0.1';
const base = `http://${host.includes(':') ? `[${host}]` : host}:${process.env.PORT ?? 8080}`;
const env = {
  // Its own database unless told otherwise: the chain is new at every start, so payments one run recorded are on a
  // chain the next does not have, and `pnpm start` may be running on .data/pglite beside it (one process per
  // directory: a second is refused).
  PGLITE_DIR: process.env.PGLITE_DIR ?? X402_PGLITE_DIR,
  X402_FACILITATOR_URL: rail.facilitatorUrl,
  X402_RPC_URL: rail.rpcUrl,
  X402_PAY_TO: rail.payTo,
  X402_NETWORK: rail.network,
  X402_ASSET: rail.asset,
};
console.log(`x402 rail: ${JSON.stringify(summaryOf(rail))}`);
console.log(
  `x402 rail: service settings ${Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`,
);

const service = spawn(process.execPath, [...NODE_FLAGS, entry], { env: { ...process.env, ...env }, stdio: 'inherit' });
let stopping = false;
const stopService = () => {
  if (service.exitCode === null && service.signalCode === null) service.kill('SIGTERM');
};
service.once('exit', (code, signal) => {
  stopping = true;
  void rail.stop().finally(() => process.exit(code ?? (signal ? 1 : 0)));
});
void rail.exited.then(() => {
  if (stopping) return;
  console.error('x402 rail: the chain ended; stopping the service');
  stopping = true;
  stopService();
});
const onSignal = () => {
  stopping = true;
  stopService();
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

// Once the service answers, say how to pay it.
for (let i = 0; i < 600 && !stopping; i++) {
  const up = await fetch(`${base}/healthz`).then(
    () => true,
    () => false,
  );
  if (up) {
    console.log(
      [
        '',
        'x402 rail: funded payers (test USDC on the local chain only):',
        ...rail.payerKeys.map((k, j) => `  ${rail.payerAddresses[j]}  key ${k}`),
        'x402 rail: pay for a call as an agent would:',
        `  npx --yes pnpm@10.34.8 exec tsx deploy/x402-rail/src/pay.ts ${base}/signings/quote ` +
          `--body '{"vin":"1HGCM82633A004352"}' --key ${rail.payerKeys[0]}`,
        '',
      ].join('\n'),
    );
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}
