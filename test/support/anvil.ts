/**
 * A test's hand on the rail's chain (anvil's JSON-RPC): stop mining so a transfer is broadcast but not mined, mine a
 * block (optionally stamped with a given time), read what waits in the pool. Nothing here is in the service's path.
 */
export interface PendingTx {
  hash: string;
  from: string;
  input: string;
}

export function anvilControl(rpcUrl: string) {
  let id = 0;
  const rpc = async <T = any>(method: string, params: unknown[] = []): Promise<T> => {
    const r = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const j = (await r.json()) as { result?: T; error?: { message: string } };
    if (j.error) throw new Error(`${method}: ${j.error.message}`);
    return j.result as T;
  };
  const latestTimestamp = async () =>
    Number((await rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false])).timestamp);
  const pending = async (): Promise<PendingTx[]> => {
    const c = await rpc<{ pending: Record<string, Record<string, PendingTx>> }>('txpool_content');
    return Object.values(c.pending ?? {}).flatMap((byNonce) => Object.values(byNonce));
  };
  return {
    rpc,
    /** Off: transactions wait in the pool until `mine`. */
    automine: (on: boolean) => rpc('evm_setAutomine', [on]),
    latestTimestamp,
    pending,
    /** The pending transaction that uses the EIP-3009 authorization `nonce` (its calldata carries the nonce). */
    async pendingFor(nonce: string): Promise<PendingTx | undefined> {
      const n = nonce.toLowerCase().replace(/^0x/, '');
      return (await pending()).find((t) => t.input.toLowerCase().includes(n));
    },
    /** Mine one block with everything pending; `timestamp` (seconds) stamps it (it must be after the latest). */
    async mine(timestamp?: number) {
      if (timestamp !== undefined) await rpc('evm_setNextBlockTimestamp', [timestamp]);
      await rpc('evm_mine', []);
    },
    /** Back to mining each transaction as it arrives, with whatever was left pending mined now. */
    async restore() {
      await rpc('evm_setAutomine', [true]);
      if ((await pending()).length) await rpc('evm_mine', []);
    },
    receipt: (hash: string) => rpc<{ status: string; blockNumber: string } | null>('eth_getTransactionReceipt', [hash]),
  };
}
export type AnvilControl = ReturnType<typeof anvilControl>;
