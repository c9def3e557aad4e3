import { z } from 'zod';
import { defineNoun, noInput } from '../capability.ts';
import { timestamp } from '../answer.ts';
import { price } from '../common.ts';
import { secret } from '../secret.ts';

export const apiKeyStatus = z.enum(['active', 'superseded', 'revoked']);
export const scopeName = z.enum(['read', 'act']);

/** The spec says "no input"; an empty body keeps the key's scopes and binding. Both members narrow when given. */
export const scopeRequest = z
  .object({
    scopes: z
      .array(scopeName)
      .min(1)
      .optional()
      .meta({ description: "The scopes to keep: a subset of the key's current scopes (read, act)", example: ['read'] }),
    mandateBinding: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'The mandate id to bind the key to, or "none"', example: 'mandate_3Fq' }),
  })
  .strict();

/** ApiKey@1: the key's record. Never carries the secret, except `secretOnce` in the answer that creates one. */
export const apiKeyRecord = z.object({
  id: z.string().meta({ example: 'key_3Fq...' }),
  prefix: z
    .string()
    .meta({ description: 'Visible, non-secret prefix naming the environment', example: 'vcs_sk_test_3Fq' }),
  trustTier: z.string().meta({ example: 'anonymous' }),
  scopes: z.array(z.string()),
  mandateBinding: z.string().meta({ description: 'The mandate this key is bound to, or "none"' }),
  owner: z.string().meta({ description: 'The owning account (principal)' }),
  createdAt: timestamp,
  lastRotatedAt: timestamp.nullable(),
  expiresAt: timestamp.nullable(),
  status: apiKeyStatus,
  secretOnce: secret(z.string().optional(), 'The new secret: present only in the answer that creates it'),
});

/** What a rotation's events carry beside the successor's record. */
const rotation = z.object({
  supersedes: z.string().meta({ description: 'The superseded key' }),
  graceUntil: timestamp.meta({ description: 'Until when the superseded key still works' }),
});

export const apiKey = defineNoun({
  noun: 'apiKey',
  pillar: 'commerce',
  displayPillar: 'Commerce',
  entity: 'ApiKey',
  door: 'api-keys',
  summary: 'API keys of an account: create, rotate, revoke, mint and scope. Every secret is shown once.',
  capabilities: {
    create: {
      method: 'POST',
      path: '/api-keys/create',
      gate: 'key',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Create another key on the calling account.',
      request: noInput,
      answer: 'ApiKeyCreate@1',
      value: z.object({
        apiKey: z.string(),
        prefix: z.string(),
        subject: z.string(),
        scopes: z.array(z.string()),
        status: z.string(),
        createdAt: timestamp,
        secretOnce: secret(z.string(), 'The new key: present only in this answer'),
      }),
      events: [
        {
          type: 'ApiKey.created@1',
          when: 'success',
          extra: z.object({ by: z.string().meta({ description: 'The key whose call made it' }) }),
        },
      ],
      price: price.free(),
    },
    rotate: {
      changesKey: true,
      method: 'POST',
      path: '/api-keys/rotate',
      gate: 'key',
      mode: 'live',
      facet: 'commerce',
      summary: 'Supersede the calling key and issue its successor; the old key works for a grace period.',
      request: noInput,
      answer: 'ApiKey@1',
      value: apiKeyRecord,
      events: [
        { type: 'ApiKey.minted@1', when: 'success', extra: rotation },
        { type: 'ApiKey.rotated@1', when: 'success', extra: rotation },
      ],
      price: price.free(),
    },
    revoke: {
      changesKey: true,
      method: 'POST',
      path: '/api-keys/revoke',
      gate: 'key',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Revoke the calling key at once.',
      request: noInput,
      answer: 'ApiKey@1',
      value: apiKeyRecord,
      events: [{ type: 'ApiKey.revoked@1', when: 'success' }],
      price: price.free(),
    },
    mint: {
      method: 'POST',
      path: '/api-keys/mint',
      gate: 'key',
      mode: 'live',
      facet: 'commerce',
      summary: 'Mint an additional key on the calling account.',
      request: noInput,
      answer: 'ApiKey@1',
      value: apiKeyRecord,
      events: [
        {
          type: 'ApiKey.minted@1',
          when: 'success',
          extra: z.object({ by: z.string().meta({ description: 'The key whose call made it' }) }),
        },
      ],
      price: price.free(),
    },
    scope: {
      changesKey: true,
      method: 'POST',
      path: '/api-keys/scope',
      gate: 'key',
      mode: 'sandbox',
      facet: 'data',
      summary: "Narrow the calling key's scopes and bind it to a mandate.",
      request: scopeRequest,
      answer: 'ApiKeyScope@1',
      value: z.object({
        apiKey: z.string(),
        scopes: z.array(z.string()),
        mandateBinding: z.string(),
        status: z.string(),
        scopedAt: timestamp,
      }),
      events: [{ type: 'ApiKey.scoped@1', when: 'success' }],
      price: price.free(),
    },
  },
});
