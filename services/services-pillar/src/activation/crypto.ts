import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '@vcs/platform';

/**
 * Dev-only default, used when CONNECTION_ENCRYPTION_KEY is unset in the embedded mode; a distributed process refuses
 * to start without a key.
 */
const DEV_ONLY_SEED = 'vcs-dev-only-connection-encryption-key';

/** CONNECTION_ENCRYPTION_KEY: 32 bytes, base64 (`openssl rand -base64 32`); unset, the dev-only key. */
export const connectionSettings = z.object({
  CONNECTION_ENCRYPTION_KEY: z
    .string()
    .optional()
    .refine(
      (raw) => raw === undefined || Buffer.from(raw, 'base64').length === 32,
      'expected 32 bytes, base64-encoded (openssl rand -base64 32)',
    ),
});

/**
 * The key credentials are sealed with; `embedded` allows the dev-only key (a deployment must never use it
 * silently).
 */
export function connectionKey(settings: z.infer<typeof connectionSettings>, opts: { embedded: boolean }): Buffer {
  const raw = settings.CONNECTION_ENCRYPTION_KEY;
  if (raw) return Buffer.from(raw, 'base64');
  if (!opts.embedded)
    throw new ConfigError(
      'config error: CONNECTION_ENCRYPTION_KEY: required outside the embedded mode ' +
        '(32 bytes, base64: openssl rand -base64 32; or CONNECTION_ENCRYPTION_KEY_FILE)',
    );
  return createHash('sha256').update(DEV_ONLY_SEED).digest();
}

/** AES-256-GCM with a fresh 12-byte IV per credential; the tag authenticates it. */
export function encryptCredential(key: Buffer, plain: string) {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return { ciphertext, iv, tag: c.getAuthTag() };
}

export function decryptCredential(key: Buffer, s: { ciphertext: Buffer; iv: Buffer; tag: Buffer }): string {
  const d = createDecipheriv('aes-256-gcm', key, s.iv);
  d.setAuthTag(s.tag);
  return Buffer.concat([d.update(s.ciphertext), d.final()]).toString('utf8');
}
