/**
 * The services a deployment runs: the gateway and one per pillar of the catalog (`pillars`, libs/contract). A pillar's
 * service is named by its folder under services/ (package `@vcs/<folder>`); the bundle (`dist/<name>.js`), the
 * process, the compose service and the image's `SERVICE` go by that name, and `REPLICAS_<PILLAR>` sets how many run.
 * A pillar added to the catalog without its entry here does not compile; test/pillars.test.ts checks the rest
 * (its folder, its definition in the embedded process, the compose file and the Dockerfile).
 */
import { pillars, type Pillar } from '../libs/contract/src/capability.ts';

export const pillarService = {
  data: 'data',
  services: 'services-pillar',
  commerce: 'commerce',
  workflows: 'workflows',
} as const satisfies Record<Pillar, string>;

export type PillarServiceName = (typeof pillarService)[Pillar];
export type ServiceName = 'gateway' | PillarServiceName;

/** Every pillar's service, in the catalog's order of pillars. */
export const PILLAR_SERVICES: readonly PillarServiceName[] = pillars.map((p) => pillarService[p]);
/** Every service: the gateway, then each pillar's. */
export const SERVICES: readonly ServiceName[] = ['gateway', ...PILLAR_SERVICES];

/** The most processes of one service start:distributed runs (REPLICAS_<PILLAR>). */
export const MAX_REPLICAS = 64;

/** The setting that says how many processes of a service run: REPLICAS_GATEWAY, REPLICAS_DATA, REPLICAS_SERVICES… */
export function replicasSetting(service: ServiceName): string {
  const pillar = pillars.find((p) => pillarService[p] === service);
  return `REPLICAS_${(pillar ?? 'gateway').toUpperCase()}`;
}
