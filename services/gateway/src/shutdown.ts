import { Server as NetServer, type Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Close without dropping an accepted request, keep-alive connections included:
 * 1. from now on every response carries `Connection: close`, so a keep-alive client sends no further request on a
 *    socket that is about to close (its next request opens a new connection, which a load balancer sends to
 *    another replica);
 * 2. stop listening (plain net close: Node's http close() would also cut "idle" sockets at once, and a socket the
 *    kernel has just accepted counts as idle until its request is parsed);
 * 3. give clients `graceMs` to finish: a request already on its way on a kept-alive socket is answered (with
 *    `Connection: close`);
 * 4. then fastify closes what is idle and waits for every request in flight.
 */
export async function closeGracefully(app: FastifyInstance, graceMs = 1000) {
  app.server.prependListener('request', (_req, res) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  });
  if (app.server.listening) NetServer.prototype.close.call(app.server);
  await new Promise((r) => setTimeout(r, graceMs));
  await app.close();
}

/**
 * On close, drop the connections that carry no request: Node's own close cuts kept-alive sockets between requests,
 * but counts a socket that was opened and never sent one (an HTTP client's pool opens a spare) as busy until its
 * headers time out, which held a close for 70 s. A socket with a request in flight finishes it, then is ended.
 * Per request this only notes the socket's latest response; the sockets are sorted out once, at close.
 */
export function closeUnusedConnections(app: FastifyInstance) {
  const latest = new Map<Socket, ServerResponse | undefined>();
  app.server.on('connection', (socket: Socket) => {
    latest.set(socket, undefined);
    socket.once('close', () => latest.delete(socket));
  });
  app.server.on('request', (req, res) => latest.set(req.socket, res));
  app.addHook('preClose', async () => {
    for (const [socket, res] of latest)
      if (!res || res.writableFinished)
        socket.destroy(); // never used, or between requests
      else res.once('close', () => socket.end()); // after the answer is written
  });
}
