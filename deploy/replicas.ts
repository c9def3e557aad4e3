/**
 * What `start:distributed` runs: every process of the deployment (REPLICAS_<PILLAR> of each service) and the ports
 * each listens on, so that no two share one.
 *
 * - The gateway's replica r serves its API, /healthz, /readyz and /metrics on PORT + r − 1 (8080, 8081, …), or
 *   /metrics, /healthz and /readyz on METRICS_PORT + r − 1 when METRICS_PORT is set.
 * - A pillar's replica r serves /healthz, /readyz and /metrics on HEALTH_PORT + 100 × i + r − 1, i being the pillar's
 *   place in the catalog's order (data 0, services-pillar 1, commerce 2, workflows 3): with HEALTH_PORT 9100 (its
 *   default here), data's replicas on 9100, 9101, …, the services pillar's on 9200, …. A replica keeps its port
 *   whatever the other services' counts. HEALTH_PORT=0 runs pillars without health servers.
 */
import { baseConfig, listenHost, parseSettings, setting, urlOf } from '../libs/platform/src/config.ts';
import { MAX_REPLICAS, PILLAR_SERVICES, replicasSetting, type ServiceName } from './services.ts';

/** HEALTH_PORT when start:distributed is not told one: every pillar replica has health unless told otherwise. */
export const DEFAULT_HEALTH_PORT = 9100;
/** Ports between one pillar's first replica and the next pillar's: more than any replica count (MAX_REPLICAS). */
export const HEALTH_PORT_BLOCK = 100;

// The settings that place the processes (read as their processes read them; zod is the platform's).
const ports = baseConfig.pick({}).extend({
  PORT: setting.int(0, 65535).default(8080),
  HOST: listenHost.default('127.0.0.1'),
  METRICS_PORT: setting.int(0, 65535).default(0),
  METRICS_HOST: listenHost.default('127.0.0.1'),
  HEALTH_PORT: setting.int(0, 65535).default(DEFAULT_HEALTH_PORT),
  HEALTH_HOST: listenHost.default('127.0.0.1'),
});

/** One process of the deployment: which, and the settings that give it its own ports. */
export interface Replica {
  service: ServiceName;
  replica: number;
  env: Record<string, string>;
  /** Its API (the gateway's), or undefined. */
  serves?: string;
  /** Where its /healthz, /readyz and /metrics are, or undefined (HEALTH_PORT=0). */
  health?: string;
}

/** Port `first + offset`, or 0 (any free port) when `first` is 0; past 65535 is a config error naming `name`. */
function portOf(name: string, first: number, offset: number): number {
  if (first === 0) return 0;
  if (first + offset > 65535)
    throw new Error(
      `config error: ${name}: ${first} leaves no port for every replica (${first} + ${offset} is past 65535); set a lower one`,
    );
  return first + offset;
}

/** Replicas per service from REPLICAS_<SERVICE> (1 when unset); a value that is not 1–MAX_REPLICAS is a config error. */
function replicasOf(s: ServiceName, env: NodeJS.ProcessEnv): number {
  const name = replicasSetting(s);
  const raw = env[name];
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > MAX_REPLICAS)
    throw new Error(
      `config error: ${name}: expected a whole number from 1 to ${MAX_REPLICAS} (value: ${JSON.stringify(raw)})`,
    );
  return n;
}

/**
 * Every process of the deployment, pillars first (so the gateway's first requests find responders). Throws one line
 * (`config error: NAME: …`) for a wrong setting.
 */
export function planReplicas(env: NodeJS.ProcessEnv = process.env): Replica[] {
  const p = parseSettings(ports, env);
  const plan: Replica[] = [];
  for (const service of [...PILLAR_SERVICES, 'gateway'] as const) {
    for (let r = 1; r <= replicasOf(service, env); r++) {
      if (service === 'gateway') {
        const port = portOf('PORT', p.PORT, r - 1);
        const metrics = portOf('METRICS_PORT', p.METRICS_PORT, r - 1);
        plan.push({
          service,
          replica: r,
          env: { PORT: String(port), ...(p.METRICS_PORT ? { METRICS_PORT: String(metrics) } : {}) },
          serves: urlOf({ host: p.HOST, port: port }),
          health: p.METRICS_PORT ? urlOf({ host: p.METRICS_HOST, port: metrics }) : urlOf({ host: p.HOST, port: port }),
        });
        continue;
      }
      const port = p.HEALTH_PORT
        ? portOf('HEALTH_PORT', p.HEALTH_PORT, HEALTH_PORT_BLOCK * PILLAR_SERVICES.indexOf(service) + r - 1)
        : 0;
      plan.push({
        service,
        replica: r,
        env: { HEALTH_PORT: String(port) },
        health: port ? urlOf({ host: p.HEALTH_HOST, port: port }) : undefined,
      });
    }
  }
  return plan;
}

/** The table start:distributed prints: each process, its pid, its API and its health port. */
export function tableOf(plan: (Replica & { pid?: number })[]): string {
  const rows = [
    ['service', 'replica', 'pid', 'API', '/healthz, /readyz, /metrics'],
    ...plan.map((x) => [x.service, String(x.replica), String(x.pid ?? '-'), x.serves ?? '-', x.health ?? 'off']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
