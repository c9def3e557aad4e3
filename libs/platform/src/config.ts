import { z } from 'zod';

/** Settings every process reads. Each service extends this with its own. */
export const baseConfig = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NATS_URL: z.string().url().optional(),
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  PGLITE_DIR: z.string().default('.data/pglite'),
  BUS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(3000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
});
export type BaseConfig = z.infer<typeof baseConfig>;

/**
 * Parse settings once at start. A wrong or missing setting stops the process with one line naming it.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = issue.path.join('.') || '(environment)';
    process.stderr.write(`config error: ${name}: ${issue.message} (value: ${JSON.stringify(env[name] ?? null)})\n`);
    process.exit(78); // EX_CONFIG
  }
  return parsed.data;
}

/** Distributed needs all three servers; naming the missing ones beats guessing at half a setup. */
export function requireDistributed(cfg: BaseConfig): { natsUrl: string; databaseUrl: string; redisUrl: string } {
  const missing = (['NATS_URL', 'DATABASE_URL', 'REDIS_URL'] as const).filter((k) => !cfg[k]);
  if (missing.length) {
    process.stderr.write(`config error: ${missing.join(', ')}: required to run as a separate process (distributed mode); use \`pnpm start\` for the embedded mode\n`);
    process.exit(78);
  }
  return { natsUrl: cfg.NATS_URL!, databaseUrl: cfg.DATABASE_URL!, redisUrl: cfg.REDIS_URL! };
}
