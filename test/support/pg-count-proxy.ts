/**
 * A TCP proxy in front of a Postgres server that counts, per client process, what it sends: the bytes pass through
 * untouched, and each frontend message is read only for its type. A process is told by its connections'
 * `application_name` (the services set `vcs-<service>`: store/db.ts `createPgDb`).
 *
 * - `statements`: each simple query (`Q`: BEGIN and COMMIT are sent so) and each `Execute` (`E`) of the extended
 *   protocol (a query with parameters), by its text too (`texts`).
 * - `roundTrips`: each simple query and each `Sync` (`S`) after an Execute: where the client waits for the server.
 *
 * `ignore(sql)`: statements not counted (a timer's poll, which runs whatever the traffic), nor their round trips.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface PgCounts {
  statements: number;
  roundTrips: number;
  texts: Record<string, number>;
}

export interface PgCountProxy {
  port: number;
  /** A copy of the counts so far, by application_name. */
  counts(): Record<string, PgCounts>;
  close(): Promise<void>;
}

export async function startPgCountProxy(
  upstream: { host: string; port: number },
  ignore: (sql: string) => boolean = () => false,
): Promise<PgCountProxy> {
  const counts: Record<string, PgCounts> = {};
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const db = connect(upstream.port, upstream.host);
    sockets.add(client).add(db);
    let app = '(unnamed)';
    let pending = Buffer.alloc(0);
    let started = false;
    // The extended protocol: Parse names a statement's text, Bind a portal of it, Execute runs the portal.
    const prepared = new Map<string, string>();
    let bound = '';
    let executed = false;
    const cstrings = (body: Buffer) => body.toString('utf8').split('\0');
    const counted = () => (counts[app] ??= { statements: 0, roundTrips: 0, texts: {} });
    const statement = (sql: string) => {
      if (ignore(sql)) return false;
      const c = counted();
      c.statements++;
      c.texts[sql] = (c.texts[sql] ?? 0) + 1;
      return true;
    };
    const count = (type: string, body: Buffer) => {
      if (type === 'Q') {
        if (statement(cstrings(body)[0]!)) counted().roundTrips++;
      } else if (type === 'P') {
        const [name, sql] = cstrings(body);
        prepared.set(name!, sql!);
      } else if (type === 'B') bound = prepared.get(cstrings(body)[1]!) ?? '';
      else if (type === 'E') executed = statement(bound) || executed;
      else if (type === 'S') {
        if (executed) counted().roundTrips++;
        executed = false;
      }
    };
    client.on('data', (chunk: Buffer) => {
      db.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) return;
          const len = pending.readInt32BE(0);
          if (pending.length < len) return;
          const code = pending.readInt32BE(4);
          // An SSL or GSS request waits for the server's one-byte answer; the startup message follows it.
          if (code !== 80877103 && code !== 80877104) {
            const fields = pending.subarray(8, len).toString('utf8').split('\0');
            for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'application_name') app = fields[i + 1]!;
            started = true;
          }
          pending = pending.subarray(len);
          continue;
        }
        if (pending.length < 5) return;
        const len = pending.readInt32BE(1);
        if (pending.length < 1 + len) return;
        count(String.fromCharCode(pending[0]!), pending.subarray(5, 1 + len));
        pending = pending.subarray(1 + len);
      }
    });
    db.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      db.destroy();
      sockets.delete(client);
      sockets.delete(db);
    };
    client.on('close', end).on('error', end);
    db.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    counts: () => structuredClone(counts),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
