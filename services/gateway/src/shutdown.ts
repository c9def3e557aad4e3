import { Server as NetServer } from 'node:net';
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
