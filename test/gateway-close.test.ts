import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';

// A client's pool may open a connection it never sends a request on. Node counts such a socket as busy until its
// headers time out (a minute or more), so a close waited on it; the gateway drops it instead.
describe('closing the gateway', () => {
  it('does not wait on a connection that never sent a request, and still answers one in flight', async () => {
    const svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('test', 'silent') });
    const url = new URL(await svc.app.listen({ port: 0, host: '127.0.0.1' }));
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const s = connect(Number(url.port), url.hostname, () => resolve(s));
        s.once('error', reject);
      });
    const unused = await open();
    const unusedClosed = once(unused, 'close');
    // A request whose body is still arriving when the close begins.
    const busy = await open();
    let answer = '';
    busy.on('data', (d: Buffer) => (answer += d.toString()));
    busy.write(
      'POST /api-keys/scope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const stopped = svc.stop();
    await new Promise((r) => setTimeout(r, 200));
    busy.write('}');
    await stopped;
    await unusedClosed;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 \d{3} /);
    unused.destroy();
    busy.destroy();
  }, 30_000);
});
