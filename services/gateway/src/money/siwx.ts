import type { FastifyRequest } from 'fastify';
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature,
} from '@x402/extensions/sign-in-with-x';
import type { Kv } from '@vcs/platform';

/**
 * x402's sign-in-with-x, with the extension's own functions: every 402 declares a challenge (domain, uri, nonce,
 * issuedAt), and a request carrying `SIGN-IN-WITH-X` is the wallet proving it is the one that paid — checked for its
 * origin and age (`validateSIWxMessage`), its signature (`verifySIWxSignature`, EOA recovery, no network) and used
 * once (its nonce). Commerce then answers the stored answer that wallet paid for, if any (intents.reread).
 */

const STATEMENT = 'Read again the answer this wallet paid for';
/** A challenge is signed within this (the library's default age check is 5 minutes). */
const CHALLENGE_SECONDS = 300;

/** The declaration per network, made once (its schema is the same for every 402). */
const declarations = new Map<string, ReturnType<typeof declareSIWxExtension>[typeof SIGN_IN_WITH_X]>();

/** The challenge a 402 declares, in `extensions["sign-in-with-x"]` (completed as the library completes it). */
export async function siwxChallenge(origin: string, resourceUrl: string, network: string) {
  // Per request: the origin comes from the request when PUBLIC_BASE_URL is unset, so none is kept.
  const server = createSIWxResourceServerExtension({
    origin,
    storage: { recordPayment: async () => {}, hasPaid: async () => false },
  });
  let declaration = declarations.get(network);
  if (!declaration) {
    declaration = declareSIWxExtension({ network, statement: STATEMENT, expirationSeconds: CHALLENGE_SECONDS })[
      SIGN_IN_WITH_X
    ];
    declarations.set(network, declaration);
  }
  // A fresh nonce, issuedAt and expirationTime for each 402: the library's enrichment makes them.
  return server.enrichPaymentRequiredResponse!(declaration, {
    resourceInfo: { url: resourceUrl },
    requirements: [{ network }],
  } as never);
}

export type SiwxProof = { payer: string } | { refused: string } | null;

/** The wallet a request's `SIGN-IN-WITH-X` proves (null: none sent), or why the proof is refused. */
export async function siwxProof(req: FastifyRequest, origin: string, kv: Kv): Promise<SiwxProof> {
  const raw = req.headers[SIGN_IN_WITH_X.toLowerCase()];
  if (typeof raw !== 'string') return null;
  try {
    const payload = parseSIWxHeader(raw);
    const valid = await validateSIWxMessage(payload, new URL(origin));
    if (!valid.isValid) return { refused: `${valid.invalidReason}: ${valid.invalidMessage}` };
    const signed = await verifySIWxSignature(payload);
    if (!signed.isValid) return { refused: `${signed.invalidReason}: ${signed.invalidMessage}` };
    // Once: a proof seen again (intercepted, replayed) is refused.
    const fresh = await kv.setNx(`siwx:nonce:${payload.nonce}`, '1', (CHALLENGE_SECONDS + 60) * 1000);
    if (!fresh) return { refused: 'invalid_siwx_nonce: this proof was used already; sign a new challenge' };
    return { payer: signed.payer };
  } catch (e) {
    return { refused: `invalid_siwx_header: ${(e as Error).message}` };
  }
}
