import type { Stoppable } from '@vcs/platform';
import type { CommerceServices } from '../config.ts';
import { reconcileExecutions } from './executions.ts';
import { reconcileOpenPayments } from './intents.ts';

/**
 * The way forward for everything left half-way: executions whose lease ran out, and x402 payments whose
 * settlement outcome is unknown. One pass at a time per process, every second; every commerce replica runs it.
 */
export function startReconciler(services: CommerceServices, intervalMs = 1_000): Stoppable {
  let pass: Promise<void> | null = null;
  const run = async () => {
    await reconcileOpenPayments(services);
    await reconcileExecutions(services);
  };
  const timer = setInterval(() => {
    if (pass) return;
    pass = run()
      .catch((err) => services.log.warn({ err }, 'reconciler: a pass failed; trying again'))
      .finally(() => {
        pass = null;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
