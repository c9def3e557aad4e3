import { Server as NetServer } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Close without dropping an accepted request. Node's http close() also cuts "idle" sockets at once, and a
 * socket the kernel has just accepted counts as idle until its request is parsed. So: stop listening first
 * (plain net close), give such sockets `graceMs` to deliver their request, then let fastify close, which
 * waits for every request in flight.
 */
export async function closeGracefully(app: FastifyInstance, graceMs = 500) {
  if (app.server.listening) NetServer.prototype.close.call(app.server);
  await new Promise((r) => setTimeout(r, graceMs));
  await app.close();
}
