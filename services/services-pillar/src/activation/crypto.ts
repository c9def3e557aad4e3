import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Dev-only default, used when CONNECTION_ENCRYPTION_KEY is unset (embedded mode); set a real key anywhere else. */
const DEV_ONLY_SEED = 'vcs-dev-only-connection-encryption-key';

export function connectionKey(env = process.env): Buffer {
  const raw = env.CONNECTION_ENCRYPTION_KEY;
  if (!raw) return createHash('sha256').update(DEV_ONLY_SEED).digest();
  const b = Buffer.from(raw, 'base64');
  if (b.length !== 32) throw new Error(`config error: CONNECTION_ENCRYPTION_KEY: expected 32 bytes, base64-encoded (openssl rand -base64 32); got ${b.length} bytes`);
  return b;
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
