import { createServer, connect as dial, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of a NATS server that cuts the way back: once a client behind it sends a message whose
 * subject starts with `trigger` (`PUB` or `HPUB`), it stops passing the server's bytes to every client behind it, and
 * keeps passing the clients' bytes to the server. A process behind it then publishes into the stream and never
 * hears the acknowledgement: the message is stored, its publisher does not know it. Connections made after the cut
 * (a reconnect) are cut too.
 */
export async function startNatsCut(natsUrl: string, trigger: string) {
  const target = new URL(natsUrl.split(',')[0]!.trim());
  const sockets = new Set<Socket>();
  const state = { cutAt: 0 };
  const marker = new RegExp(`(^|\\r\\n)H?PUB ${trigger.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  const server: Server = createServer((client) => {
    const upstream = dial(Number(target.port || 4222), target.hostname);
    sockets.add(client).add(upstream);
    let tail = ''; // the end of the last chunk, so a marker split across two chunks is still seen
    client.on('data', (d) => {
      const text = tail + d.toString('latin1');
      if (!state.cutAt && marker.test(text)) state.cutAt = Date.now();
      tail = text.slice(-200);
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!state.cutAt) client.write(d);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `nats://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** When the way back was cut (ms since the epoch), or 0 while it is whole. */
    cutAt: () => state.cutAt,
    /** Connections open through it now (both ends of each). */
    connections: () => sockets.size / 2,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
