import { secretMemberNames } from '@vcs/contract';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths pino blanks before a line is written: no key or secret ever reaches a log. */
export const REDACT_PATHS = [
  ...new Set([
    'req.headers.authorization',
    'req.headers["x-api-key"]',
    'headers.authorization',
    'headers["x-api-key"]',
    'key',
    'secret',
    'credential',
    '*.key',
    '*.secret',
    '*.credential',
    '*.authorization',
    // Every member the contract marks secret (secretOnce, …), by name, at the top and one level down.
    ...secretMemberNames().flatMap((n) => [n, `*.${n}`]),
  ]),
];

export function createLogger(service: string, level = 'info', destination?: NodeJS.WritableStream): Logger {
  return pino(
    { name: service, level, base: { service }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    destination,
  );
}
