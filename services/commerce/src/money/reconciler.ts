import type { Stoppable } from '@vcs/platform';
import type { CommerceServices } from '../config.ts';
import { reconcileExecutions } from './executions.ts';
import { wireMoney } from './ops.ts';
import { reconcileOpenPayments } from './pay.ts';

/**
 * The way forward for everything left half-way: payments not proven final (decided from the chain) and executions
 * whose lease ran out. One pass at a time per process, a pass every `intervalMs` of the injected clock (a test
 * moves time instead of sleeping); every commerce replica runs it, and row locks and leases keep them apart.
 */
export function startReconciler(services: CommerceServices, intervalMs = 1_000): Stoppable {
  wireMoney(services);
  let stopped = false;
  const pass = async () => {
    await reconcileOpenPayments(services);
    await reconcileExecutions(services);
  };
  let current: Promise<void> | null = null;
  void (async () => {
    while (!stopped) {
      await services.clock.sleep(intervalMs);
      if (stopped) break;
      current = pass().catch((err) => services.log.warn({ err }, 'reconciler: a pass failed; trying again'));
      await current;
      current = null;
    }
  })();
  return {
    // The pass under way is finished; the sleep is left (on a test's manual clock it never ends by itself).
    async stop() {
      stopped = true;
      await current;
    },
  };
}
