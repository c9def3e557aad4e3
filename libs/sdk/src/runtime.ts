// The SDK's hand-written core: transport over fetch, the Answer union and the offer/handoff helpers.
// It imports nothing from the monorepo (the Answer types are generated from the catalog), so the package has no
// dependency beyond `fetch` (Node 18+ and browsers), at run time or in its types.
import type { Answer, Blocked, Empty, Offer, Ok } from './generated/answer.ts';

export type { Answer, Blocked, Empty, Offer, Ok };
export type { BlockedValue, Meter, OfferValue, Provenance } from './generated/answer.ts';

/** The smallest fetch this SDK needs: the exec isolate supplies a bridge with this shape. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface ClientOptions {
  /** Service origin, for example http://127.0.0.1:8080 (no trailing slash needed). */
  baseUrl: string;
  /** API key sent as `Authorization: Bearer`; omit to call anonymously. */
  key?: string;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /** Headers added to every call. */
  headers?: Record<string, string>;
}

export interface Client {
  readonly baseUrl: string;
  readonly key: string | undefined;
  /** Low-level: send one HTTP request and parse the JSON answer. */
  request(method: string, path: string, params?: Record<string, unknown>, opts?: CallOptions): Promise<unknown>;
}

export interface CallOptions {
  /** The client to call through; defaults to the one set with `setDefaultClient`. */
  client?: Client;
  /** Extra headers for this call, for example `{ 'Sandbox-Trigger': 'empty' }`. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The service could not be reached or did not answer with JSON: not an Answer, so it is thrown. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

export function createClient(opts: ClientOptions): Client {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const doFetch: FetchLike = opts.fetch ?? ((url, init) => globalThis.fetch(url, init));
  return {
    baseUrl,
    key: opts.key,
    async request(method, path, params = {}, call = {}) {
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(opts.headers ?? {}),
        ...(call.headers ?? {}),
      };
      // `x-vcs-anonymous` asks for a call without the key (the acceptance suite's keyless cases).
      const anonymous = 'x-vcs-anonymous' in headers;
      if (opts.key && !anonymous) headers.authorization = `Bearer ${opts.key}`;
      let url = baseUrl + path;
      let body: string | undefined;
      if (method === 'GET') {
        const q = Object.entries(params)
          .filter(([, v]) => v !== undefined && v !== null)
          .map(
            ([k, v]) =>
              `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v))}`,
          );
        if (q.length) url += `?${q.join('&')}`;
      } else {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(params);
      }
      let res: { status: number; text(): Promise<string> };
      try {
        res = await doFetch(url, { method, headers, body, signal: call.signal });
      } catch (e) {
        throw new TransportError(`could not reach ${url}: ${(e as Error).message}`);
      }
      const text = await res.text();
      try {
        return JSON.parse(text);
      } catch {
        throw new TransportError(
          `${method} ${path} answered ${res.status} without JSON`,
          res.status,
          text.slice(0, 500),
        );
      }
    },
  };
}

let defaultClient: Client | undefined;
/** Set the client noun methods use when a call passes none. */
export function setDefaultClient(client: Client | undefined): void {
  defaultClient = client;
}

export function clientOf(opts: CallOptions | undefined): Client {
  const c = opts?.client ?? defaultClient;
  if (!c) throw new TransportError('no client: pass { client } or call setDefaultClient(createClient({ baseUrl }))');
  return c;
}

function isAnswer(v: unknown): v is Answer<unknown> {
  const t = (v as { type?: unknown } | null)?.type;
  return (
    (t === 'OK' || t === 'EMPTY' || t === 'BLOCKED' || t === 'OFFER') &&
    typeof v === 'object' &&
    v !== null &&
    'value' in v
  );
}

/** Call one capability; used by the generated noun methods. */
export async function callCapability<T>(
  method: 'GET' | 'POST',
  path: string,
  params: object | undefined,
  opts?: CallOptions,
): Promise<Answer<T>> {
  const raw = await clientOf(opts).request(method, path, (params ?? {}) as Record<string, unknown>, opts);
  if (!isAnswer(raw))
    throw new TransportError(
      `${method} ${path} answered JSON that is not an Answer envelope`,
      undefined,
      JSON.stringify(raw).slice(0, 500),
    );
  return raw as Answer<T>;
}

/** What POST /keys answers: a new anonymous sandbox key, its account, and where to read next. */
export interface MintedKey {
  type: 'OK';
  key: string;
  account: string;
  environment: string;
  links: Record<string, string>;
}

/** Call one platform operation; used by the generated `platform` functions. `{name}` path segments come from params. */
export async function callOperation<T>(
  method: 'GET' | 'POST',
  path: string,
  params: object,
  opts?: CallOptions,
): Promise<T> {
  const rest: Record<string, unknown> = { ...params };
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    if (typeof v !== 'string' || !v) throw new TransportError(`${method} ${path} needs the path parameter ${name}`);
    return encodeURIComponent(v);
  });
  return (await clientOf(opts).request(method, url, rest, opts)) as T;
}

/**
 * Who pays an x402 offer: anything that signs a payment for an x402 v2 PaymentRequired, as `@x402/core`'s
 * `x402Client` does (`createPaymentPayload`). The SDK sends what it returns as `PAYMENT-SIGNATURE`.
 */
export interface X402Payer {
  createPaymentPayload(paymentRequired: NonNullable<Offer['value']['x402']>): Promise<unknown>;
}

export interface SettleOptions extends CallOptions {
  /** Pay the offer with x402 (on the service's configured network) instead of settling it with the client's key. */
  payer?: X402Payer;
}

/** base64 of a JSON text, in Node and in browsers (the payment is ASCII JSON). */
const base64Json = (v: unknown) => {
  const bytes = new TextEncoder().encode(JSON.stringify(v));
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
};

/**
 * Settle an offer: POST its `settle.path`. The answer is the capability's own Answer once paid. With a `payer`, the
 * offer's x402 terms are signed and sent as PAYMENT-SIGNATURE (no key needed); the receipt is `answer.meter.payment`.
 */
export async function settle<T = unknown>(offer: Offer, opts?: SettleOptions): Promise<Answer<T>> {
  if (!opts?.payer) return callCapability<T>('POST', offer.value.settle.path, {}, opts);
  const required = offer.value.x402;
  if (!required)
    throw new TransportError('this offer carries no x402 terms (value.x402); settle it with a key instead');
  const payment = await opts.payer.createPaymentPayload(required);
  return callCapability<T>(
    'POST',
    offer.value.settle.path,
    {},
    { ...opts, headers: { ...(opts.headers ?? {}), 'payment-signature': base64Json(payment) } },
  );
}

/** Poll a NEEDS_HUMAN handoff: GET `value.handoff.poll.path`. */
export function pollHandoff<T = unknown>(blocked: Blocked, opts?: CallOptions): Promise<Answer<T>> {
  const path = (blocked.value as { handoff?: { poll?: { path?: unknown } } }).handoff?.poll?.path;
  if (typeof path !== 'string')
    throw new TransportError(`this BLOCKED answer (${blocked.value.code}) carries no handoff poll path`);
  return callCapability<T>('GET', path, {}, opts);
}

/** A deal opened by a workflow function: read it or move it one step on. */
export interface DealHandle<T = unknown> {
  readonly id: string | undefined;
  /** The answer that opened the deal. */
  readonly opened: Answer<T>;
  get(opts?: CallOptions): Promise<Answer<unknown>>;
  advance(params?: Record<string, unknown>, opts?: CallOptions): Promise<Answer<unknown>>;
}

/** Open a deal of a workflow (POST /<workflow>/deals) and return its handle. */
export async function openWorkflow<T = unknown>(
  workflow: string,
  params: object,
  opts?: CallOptions,
): Promise<DealHandle<T>> {
  const base = `/${workflow}/deals`;
  const opened = await callCapability<T>('POST', base, params, opts);
  const v = opened.value as { dealId?: string; id?: string };
  const id = v.dealId ?? v.id;
  const at = (suffix: string) => {
    if (!id) throw new TransportError(`the ${workflow} deal did not open (${opened.type}); inspect handle.opened`);
    return `${base}/${encodeURIComponent(id)}${suffix}`;
  };
  return {
    id,
    opened,
    get: (o) => callCapability('GET', at(''), {}, o ?? opts),
    advance: (p = {}, o) => callCapability('POST', at('/advance'), p, o ?? opts),
  };
}
