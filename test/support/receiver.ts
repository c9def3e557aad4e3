import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  at: number;
}

/**
 * A local webhook receiver, on 127.0.0.1 unless `at` says where it listens and which host its URL names (containers
 * reach it through their network's gateway address): `respond` decides each answer's status (default 204).
 */
export async function startReceiver(
  respond: (n: number, body: string) => number | { status: number; headers?: Record<string, string> } = () => 204,
  at: { listen: string; urlHost: string } = { listen: '127.0.0.1', urlHost: '127.0.0.1' },
) {
  const received: Received[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const r = respond(n++, body);
      const { status, headers } = typeof r === 'number' ? { status: r, headers: {} } : r;
      received.push({ id: String(req.headers['webhook-id']), headers: req.headers, body, status, at: Date.now() });
      res.writeHead(status, headers ?? {});
      res.end(status >= 300 ? 'nope' : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, at.listen, () => r()));
  const url = `http://${at.urlHost}:${(server.address() as any).port}/hook`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
