import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { jsonSchemaOf, type Capability } from '@vcs/contract';
import { receiptSigningSeed } from '@vcs/platform';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import {
  createJWSOfferReceiptIssuer,
  createOfferReceiptExtension,
  OFFER_RECEIPT,
  type OfferReceiptIssuer,
  type SignedReceipt,
} from '@x402/extensions/offer-receipt';
import type { Network, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import { siwxChallenge } from './siwx.ts';

/**
 * The x402 extensions a 402 declares (docs/money.md, "What an indexer sees"): `bazaar`, the capability's input and
 * output from the catalog, and `offer-receipt`, the offers signed with X402_RECEIPT_SIGNING_KEY; and the signed
 * receipt of a paid call. Built with @x402/extensions' own helpers; what is offered is requirementOf's, never restated.
 */

type Json = Record<string, unknown>;

/** Who signs offers and receipts: an Ed25519 key named by a self-describing `did:jwk` (verifiable offline). */
export interface ReceiptSigner {
  kid: string;
  /** The dev-only key (embedded mode, X402_RECEIPT_SIGNING_KEY unset): never for real money. */
  devOnly: boolean;
  issuer: OfferReceiptIssuer;
}

/** The embedded mode's key when none is set: derived from a public phrase, so anyone can sign with it. */
const DEV_ONLY_SEED = createHash('sha256').update('vcs-dev-only-x402-receipt-signing-key').digest();
/** PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410), so node:crypto takes the 32 bytes as a private key. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The signer from X402_RECEIPT_SIGNING_KEY (validated by the settings schema). Unset: the dev-only key in the embedded
 * mode, and no signer otherwise (offers and receipts go out unsigned; docs/decisions.md says why not refuse).
 */
export function receiptSignerOf(raw: string | undefined, opts: { embedded: boolean }): ReceiptSigner | null {
  if (raw === undefined && !opts.embedded) return null;
  const seed = raw === undefined ? DEV_ONLY_SEED : receiptSigningSeed(raw);
  const key = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const kid = didJwkOf(key);
  const signed = new Map<string, string>();
  return {
    kid,
    devOnly: raw === undefined,
    issuer: createJWSOfferReceiptIssuer(kid, {
      kid,
      format: 'jws',
      algorithm: 'EdDSA',
      // Ed25519 is deterministic (RFC 8032): the same bytes always sign the same. An offer's bytes change only with
      // its terms, its resource and its `validUntil` (whole seconds), so the 402s of one second share one signature
      // instead of paying one signing each.
      sign: async (payload) => {
        const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
        const text = bytes.toString('latin1');
        let sig = signed.get(text);
        if (sig === undefined) {
          sig = sign(null, bytes, key).toString('base64url');
          if (signed.size >= SIGNATURES_KEPT) signed.delete(signed.keys().next().value!);
          signed.set(text, sig);
        }
        return sig;
      },
    }),
  };
}

/** Signatures remembered (the oldest forgotten first): a second's offers of every capability and host, many times. */
const SIGNATURES_KEPT = 1024;

/** `did:jwk:<base64url of the public JWK>#0`: the key itself, so a verifier needs no network to find it. */
function didJwkOf(privateKey: KeyObject): string {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const id = Buffer.from(JSON.stringify({ alg: 'EdDSA', crv: jwk.crv, kty: jwk.kty, x: jwk.x })).toString('base64url');
  return `did:jwk:${id}#0`;
}

/** An example of a JSON Schema's value: its own example where the catalog gives one, else the simplest valid value. */
export function exampleOf(schema: Json): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  for (const k of ['example', 'default', 'const'] as const) if (k in schema) return schema[k];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches?.length) return exampleOf(branches.find((b) => b.type !== 'null') ?? branches[0]!);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, exampleOf(v)]));
    }
    case 'array':
      return schema.items ? [exampleOf(schema.items as Json)] : [];
    case 'string':
      return stringExample(schema);
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
      return min !== undefined && min > 0 ? min : 0;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}
function stringExample(schema: Json): string {
  const byFormat: Record<string, string> = {
    'date-time': '2026-01-15T12:00:00.000Z',
    date: '2026-01-15',
    uri: 'https://example.com/',
    url: 'https://example.com/',
    email: 'someone@example.com',
    uuid: '00000000-0000-4000-8000-000000000000',
  };
  const s = byFormat[schema.format as string] ?? 'text';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return s.length >= min ? s : s.padEnd(min, 'x');
}

/** A JSON Schema nested in another: its own `$schema` belongs at a document's root only. */
function nested(schema: Json): Json {
  const { $schema: _root, ...rest } = schema;
  return rest;
}

/**
 * The body a paid call answers: the OK envelope, whose `value` is the capability's value schema (the envelope's other
 * members are the same for every capability: docs/clients.md).
 */
function okAnswerSchemaOf(c: Capability): Json {
  return {
    type: 'object',
    properties: {
      type: { const: 'OK' },
      answers: { const: c.answer },
      value: nested(jsonSchemaOf(c.value, 'output')),
    },
    required: ['type', 'answers', 'value'],
  };
}

const bazaars = new Map<string, unknown>();
/**
 * The `bazaar` discovery extension of a capability: how to call it (method; query parameters or JSON body, as JSON
 * Schema from its request schema, with an example) and what it answers (from its value schema). The same for every
 * offer of it, so made once.
 */
export function bazaarOf(c: Capability): unknown {
  const made = bazaars.get(c.name);
  if (made) return made;
  const inputSchema = nested(jsonSchemaOf(c.request, 'input'));
  const input = exampleOf(inputSchema) as Json;
  const outputSchema = okAnswerSchemaOf(c);
  const output = { example: exampleOf(outputSchema), schema: outputSchema };
  const { bazaar } = declareDiscoveryExtension(
    c.method === 'GET' ? { input, inputSchema, output } : { input, inputSchema, bodyType: 'json', output },
  );
  // The library's server hook names the HTTP method (and path parameters) from the request it serves; ours is the
  // catalog's, so it is given the capability's route.
  const extension = bazaarResourceServerExtension.enrichDeclaration!(bazaar, {
    method: c.method,
    path: c.path,
    routePattern: c.path,
    adapter: { getPath: () => c.path },
  });
  bazaars.set(c.name, extension);
  return extension;
}

/**
 * The `extensions` member of an offer's PaymentRequired: `bazaar`, `payment-identifier` (optional: a client may name
 * its payment, to read a lost answer again) and a `sign-in-with-x` challenge (the wallet that paid reads its answer
 * again without paying) always; `offer-receipt` (each accepted requirement signed, through the library's own server
 * hook) when there is a signer.
 */
export async function extensionsOf(
  c: Capability,
  offered: Omit<PaymentRequired, 'extensions' | 'accepts'> & { accepts: Array<PaymentRequirementsOf<string>> },
  signer: ReceiptSigner | null,
): Promise<Record<string, unknown>> {
  const resourceUrl = offered.resource?.url ?? '';
  const extensions: Record<string, unknown> = {
    bazaar: bazaarOf(c),
    [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    ...(resourceUrl
      ? { [SIGN_IN_WITH_X]: await siwxChallenge(new URL(resourceUrl).origin, resourceUrl, offered.accepts[0]!.network) }
      : {}),
  };
  if (!signer) return extensions;
  const required = { ...offered, accepts: offered.accepts.map((a) => ({ ...a, network: caip2(a.network) })) };
  const offers = await createOfferReceiptExtension(signer.issuer).enrichPaymentRequiredResponse!(
    {},
    {
      requirements: required.accepts,
      resourceInfo: required.resource,
      paymentRequiredResponse: required,
      ...(required.error ? { error: required.error } : {}),
    },
  );
  if (offers) extensions[OFFER_RECEIPT] = offers;
  return extensions;
}

type PaymentRequirementsOf<N> = Omit<PaymentRequirements, 'network'> & { network: N };
/** X402_NETWORK, which its setting holds to CAIP-2 (`namespace:reference`), as x402's types spell it. */
function caip2(network: string): Network {
  const [namespace, reference, ...rest] = network.split(':');
  if (!namespace || !reference || rest.length) throw new Error(`not a CAIP-2 network: ${network}`);
  return `${namespace}:${reference}`;
}

/**
 * The signed receipt of a paid call: the resource paid at, the payer, the network (CAIP-2, as the spec wants for v1
 * too) and the transaction (included: our receipts favour verifiability, and meter.payment shows it anyway).
 */
export async function signReceipt(
  signer: ReceiptSigner,
  p: { resourceUrl: string; payer: string; network: string; transaction: string | null },
): Promise<SignedReceipt> {
  return signer.issuer.issueReceipt(p.resourceUrl, p.payer, p.network, p.transaction ?? undefined);
}
