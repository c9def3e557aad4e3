import http from 'node:http';
import https from 'node:https';
import { guardedLookup, isForbiddenTarget, literalHost, type TargetPolicy } from './target.ts';

export interface PostResult {
  statusCode: number | null;
  latencyMs: number;
  /** http-<code>, timeout, refused, forbidden-target, error */
  outcome: string;
  snippet: string;
  retryAfterMs: number | null;
}

function retryAfterOf(v: string | string[] | undefined, now: number): number | null {
  const raw = Array.isArray(v) ? v[0] : v;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/**
 * Connections kept alive per target (as Svix and Stripe's senders do): a new TCP (and TLS) handshake for every
 * delivery was most of a delivery's cost. Each connection is checked by the guarded lookup when it is made, so a
 * reused socket still goes to an address that passed; one agent per policy, so none is shared across policies.
 * Idle sockets close after 4 s, before the usual 5 s keep-alive of the receiving server.
 */
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, policy: TargetPolicy): http.Agent {
  const name = `${protocol}${policy.allowPrivate}${policy.allowLoopback}`;
  let agent = agents.get(name);
  if (!agent)
    agents.set(
      name,
      (agent = new (protocol === 'https:' ? https : http).Agent({
        keepAlive: true,
        timeout: 4000,
        scheduling: 'lifo',
      })),
    );
  return agent;
}

/**
 * POST one delivery (a Retry-After date is read against `now`, the sender's clock): no redirects followed (a 3xx is a
 * failure), a hard time-out for the whole exchange, and at most `capBytes` of the response read (the rest is dropped
 * and the socket closed).
 */
export function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; capBytes: number; now?: () => Date } & TargetPolicy,
): Promise<PostResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: Omit<PostResult, 'latencyMs'>) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        resolve({ ...r, latencyMs: Date.now() - started });
      }
    };
    const u = new URL(url);
    // An IP literal skips the lookup, so it is checked here.
    const literal = literalHost(u);
    if (literal && isForbiddenTarget(literal, opts)) {
      return finish({
        statusCode: null,
        outcome: 'forbidden-target',
        snippet: `${literal} is a private or reserved address`,
        retryAfterMs: null,
      });
    }
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(
      u,
      {
        method: 'POST',
        lookup: guardedLookup(opts),
        agent: agentFor(u.protocol, opts),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'vcs-webhooks/1',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const end = () =>
          finish({
            statusCode: res.statusCode ?? null,
            outcome: `http-${res.statusCode}`,
            snippet: Buffer.concat(chunks).toString('utf8').slice(0, opts.capBytes),
            // an HTTP date is read against the injected clock
            retryAfterMs: retryAfterOf(res.headers['retry-after'], (opts.now?.() ?? new Date()).getTime()),
          });
        res.on('data', (c: Buffer) => {
          if (size < opts.capBytes) chunks.push(c.subarray(0, opts.capBytes - size));
          size += c.length;
          if (size >= opts.capBytes) {
            end();
            res.destroy();
          }
        });
        res.on('end', end);
        res.on('error', end);
      },
    );
    timer = setTimeout(() => {
      req.destroy();
      finish({ statusCode: null, outcome: 'timeout', snippet: '', retryAfterMs: null });
    }, opts.timeoutMs);
    req.on('error', (e: any) =>
      finish({
        statusCode: null,
        snippet: String(e.message ?? e).slice(0, 200),
        retryAfterMs: null,
        outcome: e.code === 'EFORBIDDENTARGET' ? 'forbidden-target' : e.code === 'ECONNREFUSED' ? 'refused' : 'error',
      }),
    );
    req.end(body);
  });
}
