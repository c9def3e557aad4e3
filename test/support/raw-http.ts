import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/**
 * Send bytes exactly as given (no client-side validation, so NUL bytes, raw Unicode in paths and oversize
 * headers reach the server) and read the answer until the server closes. Always `connection: close`.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  target: string | Buffer,
  headers: Record<string, string | Buffer> = {},
  body?: Buffer | string,
  timeoutMs = 4_000,
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines: Buffer[] = [
    Buffer.concat([
      Buffer.from(`${method} `),
      Buffer.isBuffer(target) ? target : Buffer.from(target),
      Buffer.from(' HTTP/1.1\r\n'),
    ]),
  ];
  const all: Record<string, string | Buffer> = { host: url.host, connection: 'close', ...headers };
  if (payload) all['content-length'] = String(payload.length);
  for (const [k, v] of Object.entries(all))
    lines.push(Buffer.concat([Buffer.from(`${k}: `), Buffer.isBuffer(v) ? v : Buffer.from(v), Buffer.from('\r\n')]));
  lines.push(Buffer.from('\r\n'));
  if (payload) lines.push(payload);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${method} ${String(target).slice(0, 80)}`));
    }, timeoutMs);
    let connected = false;
    socket.once('connect', () => {
      connected = true;
    });
    socket.on('data', (d) => chunks.push(d));
    let socketError: string | undefined;
    socket.on('error', (e: NodeJS.ErrnoException) => {
      socketError = e.code;
    }); // the server may close while we still write an oversize body; read what came back
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.slice(0, text.indexOf('\r\n\r\n'));
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m && !connected) return reject(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
      if (!m && !text && socketError === 'ECONNRESET')
        return reject(Object.assign(new Error('connection reset before any answer'), { code: 'ECONNRESET' }));
      if (!m)
        return reject(
          new Error(
            `no HTTP answer (got ${JSON.stringify(text.slice(0, 120))}) to ${method} ${String(target).slice(0, 80)}`,
          ),
        );
      const hs: Record<string, string> = {};
      for (const l of head.split('\r\n').slice(1)) {
        const i = l.indexOf(':');
        hs[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      let rest = text.slice(head.length + 4);
      if (hs['transfer-encoding'] === 'chunked') {
        let out = '';
        for (;;) {
          const i = rest.indexOf('\r\n');
          const n = parseInt(rest.slice(0, i), 16);
          if (!n) break;
          out += rest.slice(i + 2, i + 2 + n);
          rest = rest.slice(i + 2 + n + 2);
        }
        rest = out;
      }
      let json: any = null;
      try {
        json = JSON.parse(rest);
      } catch {
        /* not JSON */
      }
      resolve({ status: Number(m[1]), headers: hs, body: rest, json });
    });
    socket.write(Buffer.concat(lines));
  });
}
