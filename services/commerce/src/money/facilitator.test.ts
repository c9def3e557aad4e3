import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { FacilitatorResponseError, FacilitatorTimeoutError, SettleError, VerifyError } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FacilitatorClient } from './facilitator.ts';

/**
 * Our facilitator client against x402's own (`HTTPFacilitatorClient`), both sent the same exchanges by a real HTTP
 * server: each answer, refusal and failure must come back the same way from both, since the paid call decides on them.
 */
type Route = (body: Record<string, unknown>, res: ServerResponse) => void;
const json = (status: number, data: unknown) => (_: unknown, res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(data));
const routes: Record<string, Route> = {
  '/ok/verify': json(200, { isValid: true, payer: '0xabc', invalidReason: null }),
  '/ok/settle': json(200, { success: true, transaction: '0x01', network: 'eip155:84532', payer: '0xabc' }),
  '/refused/verify': json(400, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'too poor' }),
  '/refused/settle': json(400, { success: false, errorReason: 'invalid_exact_evm_payload_signature', transaction: '' }),
  '/broken/verify': (_, res) => res.writeHead(500).end('upstream down'),
  '/broken/settle': (_, res) => res.writeHead(502).end('<html>bad gateway</html>'),
  '/garbled/verify': (_, res) => res.writeHead(200).end('not json'),
  '/garbled/settle': json(200, { success: true, network: 'eip155:84532' }), // no transaction
  '/slow/verify': () => undefined, // never answers
  '/slow/settle': () => undefined,
  '/moved/verify': (_, res) => res.writeHead(307, { location: '/ok/verify' }).end(),
  '/moved/settle': (_, res) => res.writeHead(308, { location: '/ok/settle' }).end(),
};

let server: Server;
let base: string;
const seen: Record<string, unknown>[] = [];
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : {};
      seen.push({ path: req.url, type: req.headers['content-type'], body });
      routes[req.url!]!(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const payload = { x402Version: 2, payload: { signature: '0x12', authorization: { value: 10n } } } as never;
const requirements = { scheme: 'exact', network: 'eip155:84532', amount: '1000000' } as never;
const clients = (at: string, timeoutMs = 2000) => [
  new FacilitatorClient({ url: `${base}/${at}`, timeoutMs }),
  new HTTPFacilitatorClient({ url: `${base}/${at}`, timeoutMs }),
];
/** What a call came to: its answer, or its error's class, message and fields. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (e: Error) => ({ error: e.constructor.name, message: e.message, ...(e as object) }),
  );

describe('the facilitator client (money/facilitator.ts) answers as x402 HTTPFacilitatorClient does', () => {
  for (const at of ['ok', 'refused', 'broken', 'garbled', 'moved'])
    for (const op of ['verify', 'settle'] as const)
      it(`${op} at /${at}`, async () => {
        const sent = async (c: HTTPFacilitatorClient) => {
          seen.length = 0;
          const o = await outcome(c[op](payload, requirements));
          return { o, request: seen[0], requests: seen.length };
        };
        const [oursClient, theirsClient] = clients(at);
        const ours = await sent(oursClient!);
        const theirs = await sent(theirsClient!);
        expect(ours).toEqual(theirs);
        // The library's request: its body (a bigint as its decimal string), as JSON; a redirect followed once.
        expect(ours.requests).toBe(at === 'moved' ? 2 : 1);
        expect(ours.request).toEqual({
          path: `/${at}/${op}`,
          type: 'application/json',
          body: {
            x402Version: 2,
            paymentPayload: { x402Version: 2, payload: { signature: '0x12', authorization: { value: '10' } } },
            paymentRequirements: requirements,
          },
        });
      });

  it('gives up after its time with FacilitatorTimeoutError, as the library does', async () => {
    for (const op of ['verify', 'settle'] as const) {
      const [ours, theirs] = await Promise.all(clients('slow', 300).map((c) => outcome(c[op](payload, requirements))));
      expect(ours).toMatchObject({ error: 'FacilitatorTimeoutError', operation: op, timeoutMs: 300 });
      expect(ours).toEqual(theirs);
    }
  });

  it('throws the types the paid call decides on', async () => {
    const [c] = clients('refused');
    await expect(c!.verify(payload, requirements)).rejects.toBeInstanceOf(VerifyError);
    await expect(c!.settle(payload, requirements)).rejects.toBeInstanceOf(SettleError);
    const [g] = clients('garbled');
    await expect(g!.settle(payload, requirements)).rejects.toBeInstanceOf(FacilitatorResponseError);
    const [s] = clients('slow', 200);
    await expect(s!.settle(payload, requirements)).rejects.toBeInstanceOf(FacilitatorTimeoutError);
  });
});
