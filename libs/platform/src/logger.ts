import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths pino blanks before a line is written: no key or secret ever reaches a log. */
export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]',
  'key', 'secret', 'secretOnce', 'credential', '*.key', '*.secret', '*.secretOnce', '*.credential', '*.authorization',
];

export function createLogger(service: string, level = 'info', destination?: NodeJS.WritableStream): Logger {
  return pino(
    { name: service, level, base: { service }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    destination as any,
  );
}
