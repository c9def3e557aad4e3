import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

/** A whole number from a setting; an empty value is a mistake, not zero (`PORT=` would pick a random port). */
const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
/** `true` or `false`, nothing else (a typo is a mistake, not "off"). */
const bool = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((v) => v === 'true');
/** A decimal number such as 0.1. */
const decimal = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'expected a number such as 0.1')
    .transform(Number)
    .pipe(z.number().min(min).max(max));
/**
 * A setting with no default, given empty (`NAME=`, a ConfigMap's `""`, an empty secret file): unset. A deployment lists
 * every setting, and one it leaves off has no other way to say so; a setting with a default keeps empty a mistake.
 */
const unsetWhenEmpty = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());
export const setting = { int, bool, decimal, unsetWhenEmpty };

/**
 * NATS servers: one URL, or a comma-separated seed list (a cluster's nodes). Each must be a `nats://` or `tls://` URL
 * (a list is not one URL, so a URL parser would refuse it). Spaces around the commas are allowed.
 */
const natsServers = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean)
      .join(','),
  )
  .refine(
    (v) =>
      v.length > 0 &&
      v.split(',').every((u) => {
        try {
          return /^(nats|tls):$/.test(new URL(u).protocol) && new URL(u).hostname !== '';
        } catch {
          return false;
        }
      }),
    'expected nats://host:port, or several separated by commas (nats://a:4222,nats://b:4222)',
  );

/** Settings every process reads. Each service extends this with its own. */
export const baseConfig = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** One server or a comma-separated seed list of a cluster's servers (`nats://a:4222,nats://b:4222`). */
  NATS_URL: natsServers.optional(),
  /**
   * Replicas of the event stream, when this process makes it; an existing stream with another count is refused at
   * start.
   */
  EVENT_STREAM_REPLICAS: int(1, 5).default(1),
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  NATS_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/, 'letters, digits, - and _ only (it prefixes subjects and the stream name)')
    .default(''),
  REDIS_PREFIX: z.string().default(''),
  PGLITE_DIR: z.string().default('.data/pglite'),
  PG_POOL_MAX: int(1, 100).default(5),
  BUS_TIMEOUT_MS: int(50, 60_000).default(3000),
  SHUTDOWN_TIMEOUT_MS: int(100, 600_000).default(10_000),
  /** /readyz fails once publishing events, or a consumer, has been stuck this long (a NATS election takes seconds). */
  EVENT_STALL_READY_MS: int(1_000, 3_600_000).default(30_000),
  /** How long a process waits at start for NATS and Postgres before it gives up with one line. */
  STARTUP_TIMEOUT_MS: int(100, 600_000).default(30_000),
  /**
   * OpenTelemetry's own settings (tracing.ts): set, spans go to `<endpoint>/v1/traces` (OTLP/HTTP JSON); unset, tracing
   * is off.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: unsetWhenEmpty(z.string().url()),
  OTEL_SERVICE_NAME: z.string().optional(),
});
export type BaseConfig = z.infer<typeof baseConfig>;

/** An address to listen on: an IP address or a host name (a name with spaces is refused, naming the setting). */
export const listenHost = z
  .string()
  .refine(
    (h) => isIP(h) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(h),
    'expected an IP address or a host name, such as 127.0.0.1 or 0.0.0.0',
  );

/** A listening address as a URL for a log line (a wildcard host is reached on 127.0.0.1; port 0 is any free one). */
export const urlOf = ({ host, port }: { host: string; port: number }) =>
  `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:` +
  `${port || '<any free port>'}`;

/** Thrown for a wrong setting found after parsing (a value only a service can judge); exits 78 with one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * A port another process already holds: one line naming the address and the setting, exit 75 (EX_TEMPFAIL: the port
 * may be free on a later try, and start:distributed tries again rather than stopping the deployment).
 */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(setting: string, host: string, port: number) {
    super(`${host}:${port} (${setting}) is in use by another process: stop it, or set ${setting} to a free port`);
  }
}

/** A listen's failure as a PortInUseError when the address was taken, else as it was. */
export const portInUse = (e: unknown, setting: string, host: string, port: number): unknown =>
  (e as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE' ? new PortInUseError(setting, host, port) : e;

/**
 * A setting may come from a file: `NAME_FILE=/run/secrets/name` (Docker and Kubernetes secrets) when `NAME` is unset;
 * one trailing newline is dropped. Setting both is a mistake, not a precedence rule to remember.
 */
function withFiles(keys: string[], env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out = { ...env };
  for (const k of keys) {
    const file = env[`${k}_FILE`];
    if (file === undefined) continue;
    if (env[k] !== undefined) throw new ConfigError(`config error: ${k}: set either ${k} or ${k}_FILE, not both`);
    try {
      out[k] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new ConfigError(
        `config error: ${k}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
  }
  return out;
}

/**
 * Parse settings (the environment's unless given), or throw a ConfigError whose message is the one line naming the
 * first wrong one.
 */
export function parseSettings<S extends z.ZodObject>(
  schema: S,
  raw: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const env = withFiles(Object.keys(schema.shape), raw);
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = issue.path.join('.') || '(environment)';
  throw new ConfigError(`config error: ${name}: ${issue.message} (value: ${JSON.stringify(env[name] ?? null)})`);
}

/**
 * Parse a process's settings once at start: the one schema of everything it reads. A wrong or missing setting
 * stops the process with one line naming it.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  try {
    return parseSettings(schema, env);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(78); // EX_CONFIG
  }
}

/** Distributed needs all three servers; naming the missing ones beats guessing at half a setup. */
export function requireDistributed(cfg: BaseConfig): { natsUrl: string; databaseUrl: string; redisUrl: string } {
  const missing = (['NATS_URL', 'DATABASE_URL', 'REDIS_URL'] as const).filter((k) => !cfg[k]);
  if (missing.length) {
    process.stderr.write(
      `config error: ${missing.join(', ')}: required to run as a separate process (distributed mode); ` +
        'use `pnpm start` for the embedded mode\n',
    );
    process.exit(78);
  }
  return { natsUrl: cfg.NATS_URL!, databaseUrl: cfg.DATABASE_URL!, redisUrl: cfg.REDIS_URL! };
}

/** A URL fit for a log line: the password, if any, replaced. */
export const redactUrl = (u: string) => {
  try {
    const x = new URL(u);
    if (x.password) x.password = '***';
    return x.toString();
  } catch {
    return '(unparseable URL)';
  }
};

/**
 * Run a process's start-up; a failure is one line on stderr and a non-zero exit, never a stack dump of minified
 * bundle lines (the stack follows at LOG_LEVEL=debug). A wrong setting exits 78 (EX_CONFIG), a port in use 75
 * (EX_TEMPFAIL), anything else 1.
 */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (e) {
    const err = e as Error;
    const config = err instanceof ConfigError || /^config error: /.test(err.message);
    process.stderr.write(`${config ? '' : `${name}: cannot start: `}${err.message.split('\n')[0]}\n`);
    if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') process.stderr.write(`${err.stack}\n`);
    process.exit(config ? 78 : err instanceof PortInUseError ? 75 : 1);
  }
}
