/**
 * A fault proxy between the service (its X402_FACILITATOR_URL) and the rail's real facilitator. Every request is
 * forwarded as it is, except each `POST /settle`, which takes the next fault a test queued with `next` (none queued:
 * pass):
 *
 * - `pass`: forwarded; the facilitator's answer relayed (a connection it drops is dropped here too).
 * - `slow`: held `ms` before it is forwarded (forwarded even if the caller gave up meanwhile).
 * - `reset`: forwarded; once the facilitator has answered (settled), the caller's socket is destroyed unanswered.
 * - `fail`: answered `status` (500) with no forwarding: nothing reaches the chain.
 * - `settlement_pending`: forwarded (with the chain not mining, the transfer is broadcast and the facilitator waits
 *   for it); once the transfer is in anvil's pool, answered HTTP 200 `{success: false, errorReason:
 *   "settlement_pending", transaction, network, payer}` — the transfer broadcast, not mined.
 * - `hold`: forwarded; the facilitator's answer is never relayed (the caller waits until it gives up or dies).
 *
 * `next` resolves once that settle has been dealt with, with what the facilitator answered (when it did) and the
 * pending transaction (settlement_pending).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { anvilControl } from './anvil.ts';

export type Fault =
  | { kind: 'pass' }
  | { kind: 'slow'; ms: number }
  | { kind: 'reset' }
  | { kind: 'fail'; status?: number }
  | { kind: 'settlement_pending' }
  | { kind: 'hold' };

export interface Handled {
  fault: Fault;
  /** The facilitator's own answer, when it gave one before `next` resolved. */
  upstream?: { status: number; body: any };
  /** settlement_pending: the broadcast transfer's hash. */
  transaction?: string;
}

export interface FaultProxy {
  url: string;
  /**
   * Queue the fault for the next /settle — of the authorization `nonce` only, when given (a reconciler re-settling
   * some other payment then passes by) — and resolve when it has been dealt with.
   */
  next(fault: Fault, nonce?: string): Promise<Handled>;
  /** Settles seen so far (forwarded or not). */
  settles(): number;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

export async function startFaultProxy({ target, rpcUrl }: { target: string; rpcUrl: string }): Promise<FaultProxy> {
  const chain = anvilControl(rpcUrl);
  const queue: { fault: Fault; nonce?: string; done: (h: Handled) => void }[] = [];
  const take = (body: Buffer) => {
    let nonce = '';
    try {
      nonce = String(JSON.parse(body.toString('utf8')).paymentPayload?.payload?.authorization?.nonce ?? '');
    } catch {
      /* not JSON: only a fault queued for any settle applies */
    }
    const i = queue.findIndex((q) => !q.nonce || q.nonce.toLowerCase() === nonce.toLowerCase());
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  };
  const sockets = new Set<Socket>();
  let settles = 0;
  let closed = false;

  const forward = async (req: IncomingMessage, body: Buffer) => {
    const r = await fetch(target + (req.url ?? '/'), {
      method: req.method,
      headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(body),
    });
    const text = await r.text();
    let json: any = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* relayed as text */
    }
    return { status: r.status, text, body: json };
  };

  const relay = (res: ServerResponse, up: { status: number; text: string }) => {
    res.writeHead(up.status, { 'content-type': 'application/json' });
    res.end(up.text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/settle') {
      try {
        return relay(res, await forward(req, body));
      } catch {
        return void req.socket.destroy();
      }
    }
    settles++;
    const { fault, done } = take(body) ?? { fault: { kind: 'pass' } as Fault, done: () => undefined };
    switch (fault.kind) {
      case 'pass':
      case 'slow': {
        if (fault.kind === 'slow') await new Promise((r) => setTimeout(r, fault.ms));
        try {
          const up = await forward(req, body);
          if (!res.destroyed) relay(res, up);
          done({ fault, upstream: { status: up.status, body: up.body } });
        } catch {
          req.socket.destroy(); // the facilitator dropped the connection: so do we
          done({ fault });
        }
        return;
      }
      case 'fail':
        send(res, fault.status ?? 500, { error: 'facilitator failed (fault proxy)' });
        return done({ fault });
      case 'reset': {
        const up = await forward(req, body).catch(() => undefined);
        req.socket.destroy();
        return done({ fault, upstream: up && { status: up.status, body: up.body } });
      }
      case 'hold': {
        const up = await forward(req, body).catch(() => undefined);
        return done({ fault, upstream: up && { status: up.status, body: up.body } });
      }
      case 'settlement_pending': {
        const parsed = JSON.parse(body.toString('utf8'));
        const auth = parsed.paymentPayload?.payload?.authorization ?? {};
        const network = parsed.paymentRequirements?.network ?? parsed.paymentPayload?.accepted?.network;
        let answered: { status: number; text: string; body: any } | undefined;
        const upstream = forward(req, body).then(
          (up) => (answered = up),
          () => undefined,
        );
        const until = Date.now() + 15_000;
        for (;;) {
          if (answered) {
            // The facilitator answered before any transfer waited in the pool (a refusal, or the chain mining after
            // all): its answer stands.
            relay(res, answered);
            return done({ fault, upstream: { status: answered.status, body: answered.body } });
          }
          const tx = await chain.pendingFor(String(auth.nonce ?? '')).catch(() => undefined);
          if (tx) {
            send(res, 200, {
              success: false,
              errorReason: 'settlement_pending',
              transaction: tx.hash,
              network,
              payer: auth.from,
            });
            void upstream;
            return done({ fault, transaction: tx.hash });
          }
          if (Date.now() > until || closed) {
            req.socket.destroy();
            return done({ fault });
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    next: (fault, nonce) =>
      new Promise<Handled>((done) => {
        queue.push({ fault, nonce, done });
      }),
    settles: () => settles,
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
