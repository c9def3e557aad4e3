import { z } from 'zod';
import { baseConfig } from '@vcs/platform';
import { LIMITS } from './app.ts';
import { rateLimitEnv } from './rateLimit.ts';

export const gatewayConfig = baseConfig.extend({
  ...rateLimitEnv.shape,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(50 * 1024 * 1024).default(LIMITS.bodyBytes),
  PUBLIC_BASE_URL: z.string().url().optional(),
});
export type GatewayEnv = z.infer<typeof gatewayConfig>;
