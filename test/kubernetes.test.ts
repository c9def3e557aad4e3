/**
 * deploy/kubernetes/ holds plain manifests no cluster here applies, so this is their check: every object valid against
 * its schema (kubernetes-models, @kubernetes-models/keda), every service of the compose file deployed as compose runs
 * it (image, command, ports, settings, secrets), probes on the health ports, an autoscaler per service, and the
 * services pillar's KEDA ScaledObject on its event consumer's lag.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap, Service, type IContainer, type IProbe } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { EVENT_STREAM } from '@vcs/contract';
import { PILLAR_SERVICES, SERVICES } from '../deploy/services.ts';
import { EVENT_CONSUMER } from '../services/services-pillar/src/events.ts';

const ROOT = join(import.meta.dirname, '..');
const DIR = join(ROOT, 'deploy', 'kubernetes');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** The schema of each kind the manifests may hold. */
const MODELS = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
} as const;
type Kind = keyof typeof MODELS;
type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; file: string };

/** Every YAML document under deploy/kubernetes/, with the file it is in. */
function manifests(dir = DIR): Manifest[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return manifests(path);
    if (!e.name.endsWith('.yaml')) return [];
    return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
      expect(doc.errors, path).toEqual([]);
      return { ...(doc.toJS() as Omit<Manifest, 'file'>), file: relative(ROOT, path) };
    });
  });
}
const all = manifests();
const ofKind = <K extends Kind>(kind: K) =>
  all
    .filter((m) => `${m.apiVersion}/${m.kind}` === kind)
    .map((m) => new MODELS[kind](m as never) as InstanceType<(typeof MODELS)[K]>);
const deployments = ofKind('apps/v1/Deployment');
const services = ofKind('v1/Service');
const autoscalers = ofKind('autoscaling/v2/HorizontalPodAutoscaler');
const scaledObjects = ofKind('keda.sh/v1alpha1/ScaledObject');
const configMaps = new Map(ofKind('v1/ConfigMap').map((c) => [c.metadata!.name!, c.data ?? {}]));

const deployment = (name: string) => deployments.find((d) => d.metadata!.name === name)!;
const containerOf = (name: string): IContainer => deployment(name).spec!.template.spec!.containers[0]!;
/** What the process in a Deployment's container reads: its ConfigMaps (envFrom), then its own env. */
function settingsOf(name: string): Record<string, string> {
  const c = containerOf(name);
  const fromMaps = (c.envFrom ?? []).map((f) => configMaps.get(f.configMapRef!.name!)!);
  return Object.assign({}, ...fromMaps, Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? ''])));
}

/**
 * The compose file's environment of a service as the secrets override makes it (DATABASE_URL_FILE and the like
 * instead of the values), each `${VAR:-default}` taken at its default; null when compose passes the operator's value
 * through (`NAME:` with nothing, or `${VAR:-}`).
 */
const compose = parse(read('deploy/docker-compose.yml'), { merge: true }) as {
  services: Record<string, { image?: string; command?: unknown; environment?: Record<string, string | null> }>;
};
const composeSecrets = parse(read('deploy/docker-compose.secrets.yml'), {
  customTags: [{ tag: '!reset', resolve: () => null }],
}) as { services: Record<string, { environment?: Record<string, string | null> }> };
function composeSettings(service: string): Record<string, { value: string | null; fixed: boolean }> {
  const env = { ...compose.services[service]!.environment, ...composeSecrets.services[service]?.environment };
  const out: Record<string, { value: string | null; fixed: boolean }> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === null && k in (composeSecrets.services[service]?.environment ?? {})) continue; // replaced by its file
    const value = v === null ? null : v.replace(/\$\{\w+(?::-([^}]*))?\}/g, (_, d: string | undefined) => d ?? '');
    out[k] = { value: value === '' ? null : value, fixed: v !== null && !v.includes('${') };
  }
  return out;
}

/** The names in the first column of the tables under a document's `## Settings` (test/settings.table.test.ts). */
const settingsIn = (file: string) => {
  const section = read(file)
    .slice(read(file).indexOf('\n## Settings'))
    .split(/\n## (?!Settings)/)[0]!;
  return [...section.matchAll(/^\| `([A-Z0-9_<>*]+)`/gm)].map((m) => m[1]!);
};

describe('deploy/kubernetes', () => {
  it('every object is valid against its schema (and the check refuses one that is not)', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const m of all) {
      const model = MODELS[`${m.apiVersion}/${m.kind}` as Kind];
      expect(model, `${m.file}: ${m.apiVersion} ${m.kind}`).toBeDefined();
      const { file, ...object } = m;
      expect(() => new model(object as never).validate(), `${file}: ${m.kind} ${m.metadata.name}`).not.toThrow();
    }
    const broken = structuredClone(all.find((m) => m.kind === 'Deployment')!) as unknown as Deployment;
    broken.spec!.template.spec!.containers[0]!.ports![0]!.containerPort = 'health' as never;
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
  });

  it('a Deployment and a Service per service of the compose file that runs the image, and no other', () => {
    const fromImage = Object.entries(compose.services)
      .filter(([, s]) => s.image === compose.services.gateway!.image)
      .map(([name]) => name);
    expect(fromImage.sort()).toEqual([...SERVICES].sort());
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual([...SERVICES].sort());
    expect(services.map((s) => s.metadata!.name).sort()).toEqual([...SERVICES].sort());
  });

  it.each(SERVICES)('%s runs as compose runs it: image, command, ports, settings and secrets', (name) => {
    const c = containerOf(name);
    const fromCompose = compose.services[name]!;
    expect(c.image).toBe(fromCompose.image);
    // The image's own command (node dist/${SERVICE}.js), picked by SERVICE, as in compose.
    expect([c.command, c.args, fromCompose.command]).toEqual([undefined, undefined, undefined]);
    const mine = settingsOf(name);
    const theirs = composeSettings(name);
    expect(mine.SERVICE).toBe(name);
    // Every setting set here is one compose sets for this service; where compose gives a value (fixed, or a default
    // the operator may override) this gives the same, but for the addresses of NATS and Redis, which are the cluster's.
    // What compose fixes, this sets too.
    const addresses = ['NATS_URL', 'REDIS_URL'];
    for (const [k, v] of Object.entries(mine)) {
      expect(theirs[k], `${name}: ${k} is not set by compose`).toBeDefined();
      if (!addresses.includes(k) && theirs[k]!.value !== null) expect(v, `${name}: ${k}`).toBe(theirs[k]!.value);
    }
    for (const [k, v] of Object.entries(theirs)) if (v.fixed) expect(mine[k], `${name}: ${k} (compose)`).toBeDefined();
    // The ports it listens on are compose's: the gateway's API and metrics ports, a pillar's health port.
    const listens = name === 'gateway' ? [mine.PORT, mine.METRICS_PORT] : [mine.HEALTH_PORT];
    expect((c.ports ?? []).map((p) => String(p.containerPort)).sort()).toEqual(listens.sort());
    if (name === 'gateway')
      expect(compose.services.gateway).toMatchObject({ ports: [`\${GATEWAY_PORT:-8080}:${mine.PORT}`] });
  });

  it('every setting a manifest sets is one README names (a NAME_FILE for a NAME it names), or the image’s SERVICE', () => {
    const known = new Set([...settingsIn('README.md'), ...settingsIn('docs/webhooks.md')]);
    const set = [
      ...[...configMaps.values()].flatMap((data) => Object.keys(data)),
      ...deployments.flatMap((d) => d.spec!.template.spec!.containers.flatMap((c) => (c.env ?? []).map((e) => e.name))),
    ];
    const unknown = set.filter(
      (k) => !known.has(k) && !(k.endsWith('_FILE') && known.has(k.slice(0, -5))) && k !== 'SERVICE',
    );
    expect(unknown).toEqual([]);
    expect(read('deploy/Dockerfile')).toContain('dist/${SERVICE}.js');
  });

  it.each(SERVICES)('%s reads its secrets from files of the Secret it mounts, never from a value', (name) => {
    const pod = deployment(name).spec!.template.spec!;
    const c = pod.containers[0]!;
    const files = (c.volumeMounts ?? []).flatMap((m) => {
      const secret = pod.volumes?.find((v) => v.name === m.name)?.secret;
      return (secret?.items ?? []).map((i) => `${m.mountPath}/${i.path}`);
    });
    const fileSettings = (c.env ?? []).filter((e) => e.name.endsWith('_FILE'));
    expect(fileSettings.length).toBeGreaterThan(0);
    for (const e of fileSettings) expect(files, `${name}: ${e.name}`).toContain(e.value);
    for (const secret of ['DATABASE_URL', 'CONNECTION_ENCRYPTION_KEY'])
      expect(settingsOf(name)[secret]).toBeUndefined();
    // The same secrets as compose's secrets override gives this service, at the same paths.
    const overridden = Object.entries(composeSecrets.services[name]!.environment!).filter(([k]) => k.endsWith('_FILE'));
    expect(fileSettings.map((e) => [e.name, e.value]).sort()).toEqual(overridden.sort());
  });

  it.each(SERVICES)('%s is probed on its health port: started and alive by /healthz, ready by /readyz', (name) => {
    const c = containerOf(name);
    const settings = settingsOf(name);
    const healthPort = name === 'gateway' ? settings.METRICS_PORT : settings.HEALTH_PORT;
    const portOf = (p: IProbe | undefined) => {
      const port = p?.httpGet?.port;
      return String(c.ports?.find((x) => x.name === port || x.containerPort === port)?.containerPort);
    };
    for (const [probe, path] of [
      [c.startupProbe, '/healthz'],
      [c.livenessProbe, '/healthz'],
      [c.readinessProbe, '/readyz'],
    ] as const) {
      expect(probe?.httpGet?.path, name).toBe(path);
      expect(portOf(probe), `${name}: ${path}`).toBe(healthPort);
    }
  });

  it.each(SERVICES)('%s: its selector, its Service and its pods agree', (name) => {
    const d = deployment(name);
    const labels = d.spec!.template.metadata!.labels!;
    expect(labels).toMatchObject(d.spec!.selector.matchLabels!);
    const s = services.find((x) => x.metadata!.name === name)!;
    expect(labels).toMatchObject(s.spec!.selector!);
    const named = new Set(containerOf(name).ports!.map((p) => p.name));
    for (const p of s.spec!.ports!) expect(named, `${name}: ${p.name}`).toContain(p.targetPort);
    // Nothing in /app changes at run time: a read-only root, as compose runs it.
    expect(containerOf(name).securityContext).toMatchObject({ readOnlyRootFilesystem: true });
  });

  it('an autoscaler on CPU for every service, each Deployment requesting the CPU it is measured against', () => {
    expect(autoscalers.map((a) => a.metadata!.name).sort()).toEqual([...SERVICES].sort());
    for (const a of autoscalers) {
      const name = a.metadata!.name!;
      expect(a.spec!.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(a.spec!.metrics).toEqual([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ]);
      expect(containerOf(name).resources?.requests?.cpu, name).toBeDefined();
      // The autoscaler owns the count: a Deployment that named one would reset it at every apply.
      expect(deployment(name).spec!.replicas, name).toBeUndefined();
    }
    expect(PILLAR_SERVICES.every((p) => autoscalers.some((a) => a.metadata!.name === p))).toBe(true);
  });

  it('KEDA scales the services pillar on its CPU and its event consumer’s lag, taking its autoscaler over', () => {
    expect(scaledObjects).toHaveLength(1);
    const [so] = scaledObjects;
    expect(so!.spec.scaleTargetRef.name).toBe('services-pillar');
    // Never to zero: the pillar answers requests too.
    expect(so!.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    // One autoscaler per Deployment: it takes over the one deploy/kubernetes makes, rather than fighting it.
    expect(so!.metadata!.annotations).toMatchObject({ 'scaledobject.keda.sh/transfer-hpa-ownership': 'true' });
    expect(so!.spec.advanced?.horizontalPodAutoscalerConfig?.name).toBe('services-pillar');
    const hpa = autoscalers.find((a) => a.metadata!.name === 'services-pillar')!;
    expect(so!.spec.maxReplicaCount).toBe(hpa.spec!.maxReplicas);
    expect(so!.spec.triggers).toContainEqual({ type: 'cpu', metricType: 'Utilization', metadata: { value: '70' } });
    const lag = so!.spec.triggers.find((t) => t.type === 'nats-jetstream');
    expect(lag?.metadata).toMatchObject({ account: '$G', stream: EVENT_STREAM, consumer: EVENT_CONSUMER });
    // Read from the consumer's leader: KEDA asks each node by name through NATS's headless service.
    expect(lag?.metadata.natsServerMonitoringEndpoint).toMatch(/^nats-headless\.[\w.-]+:8222$/);
  });
});
