import { Server as NetServer, type Socket } from 'node:net';
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
 */
export function closeUnusedConnections(app: FastifyInstance) {
  const inFlight = new Map<Socket, number>();
  let closing = false;
  app.server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  app.server.on('request', (req, res) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      if (!inFlight.has(socket)) return;
      const left = inFlight.get(socket)! - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.end(); // after the answer is written
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const [socket, requests] of inFlight) if (requests === 0) socket.destroy();
  });
}
