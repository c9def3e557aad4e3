/**
 * A self-hosted x402 facilitator: @x402/core's x402Facilitator with @x402/evm's exact scheme (v2 eip155:84532, v1
 * base-sepolia), settling from a viem wallet that pays the gas, served on 127.0.0.1 with the endpoints a hosted
 * facilitator has and HTTPFacilitatorClient calls: POST /verify, POST /settle, GET /supported. Faults can be switched
 * on for tests: paused (requests held, refused, or answered 503) and a settle whose answer is lost after it was made
 * on chain.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import { concat, createWalletClient, encodeFunctionData, http, publicActions, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localChain, NETWORK, V1_NETWORK } from './chain.ts';

/** held: requests wait until resume(), then are served; refused: connections refused; unavailable: 503 answers. */
export type PauseMode = 'held' | 'refused' | 'unavailable';

export interface Facilitator {
  url: string;
  /** The facilitator's own account: it sends every settlement and pays its gas. */
  signer: Address;
  /** The x402Facilitator itself, for an in-process x402ResourceServer. */
  x402: x402Facilitator;
  pause(mode?: PauseMode): Promise<void>;
  resume(): Promise<void>;
  /**
   * The next /settle settles on chain as usual, then its connection is destroyed instead of answered. The promise
   * gives what the answer would have been, once the settlement is done.
   */
  loseNextSettleAnswer(): Promise<SettleResponse>;
  /** Requests answered (or lost) so far, by endpoint. */
  stats(): { verify: number; settle: number; supported: number; lost: number };
  close(): Promise<void>;
}

/** The account that sends settlements and pays their gas, as @x402/evm's facilitator schemes call it. */
export function facilitatorSigner({ rpcUrl, privateKey }: { rpcUrl: string; privateKey: Hex }) {
  const account = privateKeyToAccount(privateKey);
  // Receipts polled every 50 ms (viem's default is 4 s: each settle would wait that long).
  const client = createWalletClient({
    account,
    chain: localChain(rpcUrl),
    transport: http(rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  // Gas and fees are worked out first, beside other settles: a transaction the chain would refuse fails there and
  // holds no nonce. Then one at a time: the next nonce (read from the chain when not known), signed, sent. Nonces
  // handed out ahead of the sends (viem's nonce manager) left a gap when a send failed: every transaction sent beside
  // it waited in the pool for that nonce until its receipt wait gave up, three minutes later, and each settle failed.
  let nextNonce: number | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const send = async (tx: { to: Address; data: Hex; gas?: bigint }) => {
    const prepared = await client.prepareTransactionRequest({ ...tx, parameters: ['chainId', 'fees', 'gas', 'type'] });
    const sent = queue.then(async () => {
      const nonce = (nextNonce ??= await client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
      try {
        const hash = await client.sendRawTransaction({
          serializedTransaction: await account.signTransaction({ ...prepared, nonce } as Parameters<
            typeof account.signTransaction
          >[0]),
        });
        nextNonce = nonce + 1;
        return hash;
      } catch (e) {
        nextNonce = undefined; // it may have reached the chain all the same: the next send asks the chain
        throw e;
      }
    });
    queue = sent.catch(() => undefined);
    return sent;
  };
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (a) => client.getCode(a),
      readContract: (a) =>
        client.readContract({ ...a, args: a.args ?? [] } as Parameters<typeof client.readContract>[0]),
      verifyTypedData: (a) => client.verifyTypedData(a as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: ({ address, abi, functionName, args, gas, dataSuffix }) =>
        send({
          to: address,
          data: concat([
            encodeFunctionData({ abi, functionName, args } as Parameters<typeof encodeFunctionData>[0]),
            dataSuffix ?? '0x',
          ]),
          gas,
        }),
      sendTransaction: ({ to, data }) => send({ to, data }),
      waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
    },
    // A local chain mines each transaction as it comes: a receipt later than this is a fault to answer, not to wait on.
    { confirmationTimeoutMs: 30_000 },
  );
  return { signer, address: account.address };
}

export function buildFacilitator({ rpcUrl, privateKey }: { rpcUrl: string; privateKey: Hex }) {
  const { signer, address } = facilitatorSigner({ rpcUrl, privateKey });
  // Only what this chain can settle: v2 eip155:84532 and its v1 name. (@x402/evm's registerExactEvmScheme would
  // also announce every v1 EVM network it knows, base and ethereum among them, each then settled on this chain.)
  const facilitator = new x402Facilitator()
    .register(NETWORK, new ExactEvmScheme(signer))
    // v1 names have no colon; the parameter is typed as v2's
    .registerV1(V1_NETWORK as Network, new ExactEvmSchemeV1(signer));
  return { facilitator, signer: address };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
};

async function readJson(
  req: IncomingMessage,
): Promise<{ paymentPayload?: PaymentPayload; paymentRequirements?: PaymentRequirements } | undefined> {
  let body = '';
  for await (const chunk of req) body += chunk;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export async function startFacilitator({
  rpcUrl,
  privateKey,
  port = 0,
}: {
  rpcUrl: string;
  privateKey: Hex;
  port?: number;
}): Promise<Facilitator> {
  const { facilitator, signer } = buildFacilitator({ rpcUrl, privateKey });
  const counts = { verify: 0, settle: 0, supported: 0, lost: 0 };
  const losing: ((r: SettleResponse) => void)[] = [];
  let paused: PauseMode | undefined;
  let closed = false;
  let gate: { promise: Promise<void>; open: () => void } | undefined;
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (gate) await gate.promise;
    if (closed) return void req.socket.destroy();
    if (paused === 'unavailable') return json(res, 503, { error: 'facilitator paused' });
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/supported') {
      counts.supported++;
      return json(res, 200, facilitator.getSupported());
    }
    if (req.method !== 'POST' || (path !== '/verify' && path !== '/settle'))
      return json(res, 404, { error: 'not found' });
    const body = await readJson(req);
    if (!body?.paymentPayload || !body.paymentRequirements)
      return json(res, 400, { error: 'expected JSON {paymentPayload, paymentRequirements}' });
    if (path === '/verify') {
      counts.verify++;
      return json(res, 200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
    }
    counts.settle++;
    const lose = losing.shift();
    const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
    if (!lose) return json(res, 200, result);
    counts.lost++;
    req.socket.destroy();
    lose(result);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) json(res, 500, { error: e instanceof Error ? e.message : String(e) });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const closeListener = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  const actual = await listen(port);

  const resume = async () => {
    const was = paused;
    paused = undefined;
    gate?.open();
    gate = undefined;
    if (was === 'refused') await listen(actual);
  };
  return {
    url: `http://127.0.0.1:${actual}`,
    signer,
    x402: facilitator,
    async pause(mode = 'held') {
      if (paused) await resume();
      paused = mode;
      if (mode === 'held') {
        let open!: () => void;
        gate = {
          promise: new Promise<void>((r) => {
            open = r;
          }),
          open,
        };
      }
      if (mode === 'refused') await closeListener();
    },
    resume,
    loseNextSettleAnswer: () =>
      new Promise<SettleResponse>((resolve) => {
        losing.push(resolve);
      }),
    stats: () => ({ ...counts }),
    async close() {
      closed = true;
      paused = undefined;
      gate?.open(); // held requests are dropped, not served
      if (server.listening) await closeListener();
    },
  };
}
