import type { Logger } from 'pino';

/**
 * One warn line when a store stops answering and one info line when it answers again, however many calls fail in
 * between (neither silence nor a line per failed call).
 */
export function outageLog(log: Pick<Logger, 'info' | 'warn'> | undefined, store: string) {
  let since = 0;
  return {
    down(reason: string) {
      if (since || !log) return;
      since = Date.now();
      log.warn(
        { store, reason },
        `${store} unavailable: calls that need it answer 503 store-unavailable until it is back`,
      );
    },
    up() {
      if (!since) return;
      log?.info({ store, afterMs: Date.now() - since }, `${store} available again`);
      since = 0;
    },
  };
}
