import { HTTPFacilitatorClient } from '@x402/core/server';
import {
  FacilitatorResponseError,
  FacilitatorTimeoutError,
  SettleError,
  VerifyError,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from '@x402/core/types';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { z } from 'zod';

/**
 * The x402 facilitator's HTTP API as @x402/core's `HTTPFacilitatorClient` speaks it — the same bodies to POST /verify
 * and POST /settle, the same answers, the same throws (`VerifyError`, `SettleError` for a refusal it explains;
 * `FacilitatorTimeoutError` past the time; `FacilitatorResponseError` for an answer that is not one) — sent with
 * undici's `request` instead of the global `fetch`. Two of them are on every paid call, and `fetch` (its Request,
 * Response and web streams) cost 3–5× the CPU of `request` for the same exchange (docs/decisions.md, "The
 * facilitator's HTTP client"). Everything else (`getSupported`, auth headers) is the library's own.
 */
export class FacilitatorClient extends HTTPFacilitatorClient {
  /** Its own keep-alive pool, following redirects as `fetch` did. */
  private readonly dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000 }).compose(
    interceptors.redirect({ maxRedirections: 3 }),
  );

  override async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const { status, data } = await this.post('verify', payload, requirements);
    if (status >= 200 && status < 300) return answerOf('verify', verifyAnswer, data) as VerifyResponse;
    if (isObject(data) && 'isValid' in data) throw new VerifyError(status, data as VerifyResponse);
    throw new Error(`Facilitator verify failed (${status}): ${excerpt(data)}`);
  }

  override async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const { status, data } = await this.post('settle', payload, requirements);
    if (status >= 200 && status < 300) return answerOf('settle', settleAnswer, data) as SettleResponse;
    if (isObject(data) && 'success' in data) throw new SettleError(status, data as SettleResponse);
    throw new Error(`Facilitator settle failed (${status}): ${excerpt(data)}`);
  }

  /** One POST, its body read whole within the client's time; the answer's JSON, or its text when it is not JSON. */
  private async post(
    operation: 'verify' | 'settle',
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<{ status: number; data: unknown }> {
    const auth = (await this.createAuthHeaders(operation)).headers;
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await request(`${this.url}/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify(
          { x402Version: payload.x402Version, paymentPayload: payload, paymentRequirements: requirements },
          jsonSafe,
        ),
        signal,
        dispatcher: this.dispatcher,
      });
      const text = await res.body.text();
      try {
        return { status: res.statusCode, data: JSON.parse(text) };
      } catch {
        return { status: res.statusCode, data: text };
      }
    } catch (e) {
      if (signal.aborted) throw new FacilitatorTimeoutError(operation, this.timeoutMs);
      throw e;
    }
  }
}

/** An optional member as the library reads it: null or absent is undefined. */
const optional = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? undefined);
const record = z.record(z.string(), z.unknown());
/** The answers of /verify and /settle as @x402/core checks them (its schemas are not exported; these are theirs). */
const verifyAnswer = z.object({
  isValid: z.boolean(),
  invalidReason: optional(z.string()),
  invalidMessage: optional(z.string()),
  payer: optional(z.string()),
  extensions: optional(record),
  extra: optional(record),
});
const settleAnswer = z.object({
  success: z.boolean(),
  errorReason: optional(z.string()),
  errorMessage: optional(z.string()),
  payer: optional(z.string()),
  transaction: z.string(),
  network: z.string(),
  amount: optional(z.string()),
  extensions: optional(record),
  extra: optional(record),
});

function answerOf<T extends z.ZodType>(operation: string, schema: T, data: unknown): z.output<T> {
  if (typeof data === 'string')
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid JSON: ${excerpt(data)}`);
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid data: ${excerpt(data)}`);
  return parsed.data;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const jsonSafe = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
const excerpt = (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data)).slice(0, 200);
