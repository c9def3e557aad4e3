/**
 * deploy/kubernetes/ is a kustomize base no cluster here applies, so this is its check, on what `kubectl kustomize`
 * renders (the base, and deploy/overlays/example with the KEDA and monitoring components): every object valid against
 * its schema (kubernetes-models, @kubernetes-models/keda, @kubernetes-models/prometheus-operator); every service of the
 * compose file deployed as compose runs it (the image `images:` names, command, ports, settings, secrets); every
 * documented setting in place; probes on the health ports; an autoscaler, a PodDisruptionBudget and a spread across
 * nodes per Deployment; PgBouncer between the services and Postgres; the services pillar's KEDA ScaledObject.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, type ScalarTag, type Tags } from 'yaml';
import { ConfigMap, Service, type IContainer, type IProbe } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { EVENT_STREAM } from '@vcs/contract';
import { parseSettings } from '@vcs/platform';
import { embeddedConfig } from '@vcs/embedded';
import { PILLAR_SERVICES, SERVICES } from '../deploy/services.ts';
import { EVENT_CONSUMER } from '../services/services-pillar/src/events.ts';
import { documentedSettings, NOT_DEPLOYED, REPLICA_SETTING, settingsIn } from './support/documented-settings.ts';

const ROOT = join(import.meta.dirname, '..');
const BASE = join(ROOT, 'deploy', 'kubernetes');
const EXAMPLE = join(ROOT, 'deploy', 'overlays', 'example');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

const kubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
if (!kubectl && process.env.CI) throw new Error('CI must render deploy/kubernetes: kubectl is not installed');
if (!kubectl) console.warn('kubernetes suite skipped: it renders deploy/kubernetes with `kubectl kustomize`');

/** The schema of each kind the rendered manifests may hold. */
const MODELS = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
} as const;
type Kind = keyof typeof MODELS;
type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

/**
 * As kubectl reads YAML (Go's): a hexadecimal number too large for 64 bits is a string. kustomize writes an EVM
 * address (X402_ASSET) unquoted, which a YAML 1.2 reader would take for a 160-bit number.
 */
const asKubectlReads = (tags: Tags): Tags =>
  tags.map((t) =>
    typeof t === 'object' && 'format' in t && t.format === 'HEX'
      ? ({ ...t, resolve: (s: string) => (BigInt(s) > 2n ** 63n - 1n ? s : Number(s)) } as ScalarTag)
      : t,
  );
/** What `kubectl kustomize <dir>` renders, one object a document. */
function render(dir: string): Manifest[] {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr}`);
  return parseAllDocuments(r.stdout, { customTags: asKubectlReads }).map((doc) => {
    expect(doc.errors, dir).toEqual([]);
    return doc.toJS() as Manifest;
  });
}
const all = kubectl ? render(BASE) : [];
const example = kubectl ? render(EXAMPLE) : [];
const ofKind = <K extends Kind>(kind: K, from = all) =>
  from
    .filter((m) => `${m.apiVersion}/${m.kind}` === kind)
    .map((m) => new MODELS[kind](m as never) as InstanceType<(typeof MODELS)[K]>);
const deployments = ofKind('apps/v1/Deployment');
/** The Deployments that run the service image (every one but PgBouncer's). */
const serviceDeployments = deployments.filter((d) => (SERVICES as readonly string[]).includes(d.metadata!.name!));
const services = ofKind('v1/Service');
const autoscalers = ofKind('autoscaling/v2/HorizontalPodAutoscaler');
const budgets = ofKind('policy/v1/PodDisruptionBudget');
const configMaps = new Map(ofKind('v1/ConfigMap').map((c) => [c.metadata!.name!, c.data ?? {}]));

const deployment = (name: string) => deployments.find((d) => d.metadata!.name === name)!;
const containerOf = (name: string): IContainer => deployment(name).spec!.template.spec!.containers[0]!;
/** What the process in a Deployment's container reads: its ConfigMaps (envFrom), then its own env. */
function settingsOf(name: string): Record<string, string> {
  const c = containerOf(name);
  const fromMaps = (c.envFrom ?? []).map((f) => configMaps.get(f.configMapRef!.name!)!);
  return Object.assign({}, ...fromMaps, Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? ''])));
}
/** The kustomization's `images:` entry for an image name, as a reference (`vcs:latest`). */
const imageOf = (dir: string, name: string) => {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    images: { name: string; newName?: string; newTag?: string }[];
  };
  const i = k.images.find((x) => x.name === name)!;
  return `${i.newName ?? name}:${i.newTag ?? 'latest'}`;
};

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

describe.runIf(kubectl)('deploy/kubernetes (as kubectl kustomize renders it)', () => {
  const scratch: string[] = [];
  afterAll(() => {
    for (const d of scratch) rmSync(d, { recursive: true, force: true });
  });

  it('every object of the base and of the example overlay is valid against its schema (and a broken one is refused)', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const m of [...all, ...example]) {
      const model = MODELS[`${m.apiVersion}/${m.kind}` as Kind];
      expect(model, `${m.apiVersion} ${m.kind}`).toBeDefined();
      expect(() => new model(m as never).validate(), `${m.kind} ${m.metadata.name}`).not.toThrow();
    }
    // The overlay adds what the base leaves to the cluster: KEDA's ScaledObject, the ServiceMonitor, an Ingress.
    expect(new Set(example.map((m) => m.kind))).toEqual(
      new Set([...all.map((m) => m.kind), 'ScaledObject', 'ServiceMonitor', 'Ingress']),
    );
    const broken = structuredClone(deployments[0]!.toJSON()) as Deployment;
    broken.spec!.template.spec!.containers[0]!.ports![0]!.containerPort = 'health' as never;
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
    const badMonitor = structuredClone(ofKind('monitoring.coreos.com/v1/ServiceMonitor', example)[0]!.toJSON()) as {
      spec: { endpoints: unknown };
    };
    badMonitor.spec.endpoints = 'metrics';
    expect(() => new ServiceMonitor(badMonitor as never).validate()).toThrow();
  });

  it('the kustomization lists every manifest of its directory, and each component its own', () => {
    for (const dir of [BASE, join(BASE, 'keda'), join(BASE, 'monitoring'), EXAMPLE]) {
      const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      expect(k.resources.filter((r) => r.endsWith('.yaml')).sort(), dir).toEqual(files.sort());
    }
  });

  it('a Deployment and a Service per service of the compose file that runs the image, and PgBouncer’s', () => {
    const fromImage = Object.entries(compose.services)
      .filter(([, s]) => s.image === compose.services.gateway!.image)
      .map(([name]) => name);
    expect(fromImage.sort()).toEqual([...SERVICES].sort());
    expect(deployments.map((d) => d.metadata!.name).sort()).toEqual([...SERVICES, 'pgbouncer'].sort());
    expect(services.map((s) => s.metadata!.name).sort()).toEqual([...SERVICES, 'pgbouncer'].sort());
  });

  it('the image is named once: every container runs the one `images:` names, and an overlay’s changes them all', () => {
    const image = imageOf(BASE, 'vcs');
    expect(image).toBe(compose.services.gateway!.image); // vcs:latest, as compose builds it
    for (const d of serviceDeployments)
      for (const c of d.spec!.template.spec!.containers) expect(c.image, `${d.metadata!.name}/${c.name}`).toBe(image);
    expect(containerOf('pgbouncer').image).toBe(imageOf(BASE, 'vcs-pgbouncer'));
    // The manifests name the image, never a tag or a registry: only `images:` does.
    for (const f of readdirSync(BASE).filter((x) => x.endsWith('.yaml') && x !== 'kustomization.yaml'))
      for (const [, ref] of read(`deploy/kubernetes/${f}`).matchAll(/^\s+image: (\S+)/gm))
        expect(['vcs', 'vcs-pgbouncer'], `${f}: image ${ref}`).toContain(ref);
    // An overlay (the example's, and one made here as `kustomize edit set image` would) changes every Deployment.
    const overlay = mkdtempSync(join(tmpdir(), 'vcs-overlay-'));
    scratch.push(overlay);
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      `resources: [${relative(overlay, BASE)}]\nimages:\n  - { name: vcs, newName: registry.test/vcs, newTag: "2.0.0" }\n`,
    );
    for (const [dir, want] of [
      [EXAMPLE, imageOf(EXAMPLE, 'vcs')],
      [overlay, 'registry.test/vcs:2.0.0'],
    ] as const) {
      const ds = ofKind('apps/v1/Deployment', dir === EXAMPLE ? example : render(dir));
      const images = ds
        .filter((d) => d.metadata!.name !== 'pgbouncer')
        .flatMap((d) => d.spec!.template.spec!.containers.map((c) => c.image));
      expect(images, dir).toEqual(SERVICES.map(() => want));
    }
  });

  it('every Deployment has a PodDisruptionBudget that lets a drain proceed at its minimum replicas, and spreads across nodes', () => {
    for (const d of deployments) {
      const name = d.metadata!.name!;
      const labels = d.spec!.template.metadata!.labels!;
      const matches = (sel: { matchLabels?: Record<string, string> } | undefined) =>
        !!sel?.matchLabels && Object.entries(sel.matchLabels).every(([k, v]) => labels[k] === v);
      const pdb = budgets.filter((b) => matches(b.spec!.selector));
      expect(pdb.length, `${name}: PodDisruptionBudget`).toBe(1);
      const min = autoscalers.find((a) => a.spec!.scaleTargetRef.name === name)?.spec!.minReplicas ?? d.spec!.replicas;
      expect(min, `${name}: minimum replicas`).toBeGreaterThanOrEqual(2);
      // An eviction is allowed at the minimum: maxUnavailable ≥ 1, or minAvailable below the minimum.
      const { maxUnavailable, minAvailable } = pdb[0]!.spec!;
      if (maxUnavailable !== undefined) expect(Number(maxUnavailable), name).toBeGreaterThanOrEqual(1);
      else expect(Number(minAvailable), name).toBeLessThan(min!);
      const spread = d.spec!.template.spec!.topologySpreadConstraints ?? [];
      const onHosts = spread.filter((t) => t.topologyKey === 'kubernetes.io/hostname' && matches(t.labelSelector));
      expect(onHosts.length, `${name}: spread on kubernetes.io/hostname over its own pods`).toBe(1);
    }
    const gateway = autoscalers.find((a) => a.metadata!.name === 'gateway')!;
    expect(gateway.spec!.minReplicas).toBeGreaterThanOrEqual(2);
  });

  it.each(SERVICES)('%s runs as compose runs it: command, ports, settings and secrets', (name) => {
    const c = containerOf(name);
    const fromCompose = compose.services[name]!;
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

  it.each(SERVICES)('%s starts on what the manifests give it: its settings parse', (name) => {
    // The secrets as a process would read them from their files: plausible values, or empty (payments off).
    const secrets: Record<string, string> = {
      DATABASE_URL: 'postgres://vcs:pw@pgbouncer:5432/vcs',
      CONNECTION_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      X402_RECEIPT_SIGNING_KEY: Buffer.alloc(32, 2).toString('base64'),
      X402_FACILITATOR_URL: '',
      X402_RPC_URL: '',
    };
    const env = Object.fromEntries(
      Object.entries(settingsOf(name)).map(([k, v]) =>
        k.endsWith('_FILE') ? [k.slice(0, -5), secrets[k.slice(0, -5)]] : [k, v],
      ),
    );
    expect(() => parseSettings(embeddedConfig, env)).not.toThrow();
    // The database it names is PgBouncer's Service, never Postgres itself (the Secret's database_url: docs).
    expect(settingsOf(name).DATABASE_URL_FILE).toBe('/run/secrets/database_url');
  });

  it('every documented setting has its place in the manifests (a ConfigMap, a Deployment’s env, or a NAME_FILE)', () => {
    const placed = new Set([...serviceDeployments.flatMap((d) => Object.keys(settingsOf(d.metadata!.name!)))]);
    const has = (k: string) => placed.has(k) || placed.has(`${k}_FILE`);
    const missing = documentedSettings().filter((k) => !(k in NOT_DEPLOYED) && k !== REPLICA_SETTING && !has(k));
    expect(missing).toEqual([]);
    // Replica counts are the autoscalers' here (REPLICAS_<PILLAR> is compose's and start:distributed's).
    expect(autoscalers.map((a) => a.metadata!.name).sort()).toEqual([...SERVICES].sort());
  });

  it('every setting a manifest sets is one the docs name (a NAME_FILE for a NAME they name), or the image’s SERVICE', () => {
    const known = new Set(documentedSettings());
    const set = serviceDeployments.flatMap((d) => Object.keys(settingsOf(d.metadata!.name!)));
    const unknown = set.filter(
      (k) => !known.has(k) && !(k.endsWith('_FILE') && known.has(k.slice(0, -5))) && k !== 'SERVICE',
    );
    expect(unknown).toEqual([]);
    expect(read('deploy/Dockerfile')).toContain('dist/${SERVICE}.js');
    expect(settingsIn('README.md')).toContain('X402_RECEIPT_SIGNING_KEY');
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
    for (const secret of [
      'DATABASE_URL',
      'CONNECTION_ENCRYPTION_KEY',
      'X402_RECEIPT_SIGNING_KEY',
      'X402_FACILITATOR_URL',
    ])
      expect(settingsOf(name)[secret]).toBeUndefined();
    // The same secrets as compose's secrets override gives this service, at the same paths.
    const overridden = Object.entries(composeSecrets.services[name]!.environment!).filter(([k]) => k.endsWith('_FILE'));
    expect(fileSettings.map((e) => [e.name, e.value]).sort()).toEqual(overridden.sort());
  });

  it('PgBouncer pools by transaction from the Secret’s password, and only this deployment’s pods reach it', () => {
    const c = containerOf('pgbouncer');
    expect(c.env).toContainEqual({ name: 'DB_PASSWORD_FILE', value: '/run/secrets/postgres_password' });
    // Its image's configuration (deploy/pgbouncer, as compose runs it too).
    expect(read('deploy/pgbouncer/entrypoint.sh')).toMatch(/^pool_mode = transaction$/m);
    const settings = configMaps.get('vcs-pgbouncer')!;
    // The budget (docs/operations.md): its replicas' pools together below Postgres's default max_connections (100).
    expect(deployment('pgbouncer').spec!.replicas! * Number(settings.POOL_SIZE)).toBeLessThanOrEqual(90);
    // Every process's pool at every autoscaler's maximum fits in one PgBouncer's clients.
    const asked =
      autoscalers.reduce((n, a) => n + a.spec!.maxReplicas, 0) * Number(configMaps.get('vcs-settings')!.PG_POOL_MAX);
    expect(asked).toBeLessThanOrEqual(Number(settings.MAX_CLIENT_CONN));
    expect(read('docs/operations.md')).toContain(`${asked} client connections`);
    const policies = ofKind('networking.k8s.io/v1/NetworkPolicy');
    const pgb = policies.find(
      (p) => p.spec!.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'pgbouncer',
    )!;
    expect(pgb.spec!.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'vcs' } } }],
        ports: [{ protocol: 'TCP', port: 'postgres' }],
      },
    ]);
  });

  it('only the gateway takes traffic from outside: its API port from anywhere, the rest from monitoring alone', () => {
    const policies = ofKind('networking.k8s.io/v1/NetworkPolicy');
    const covering = (name: string) => {
      const labels = deployment(name).spec!.template.metadata!.labels!;
      return policies.filter((p) => {
        const sel = p.spec!.podSelector ?? {};
        const byLabels = Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
        const byExpr = (sel.matchExpressions ?? []).every(
          (e) => e.operator === 'In' && e.values!.includes(labels[e.key]!),
        );
        return byLabels && byExpr;
      });
    };
    for (const name of [...SERVICES, 'pgbouncer']) {
      const ps = covering(name);
      expect(ps.length, `${name}: a NetworkPolicy`).toBe(1);
      const open = (ps[0]!.spec!.ingress ?? []).filter((r) => !r.from?.length).flatMap((r) => r.ports ?? []);
      expect(open, name).toEqual(name === 'gateway' ? [{ protocol: 'TCP', port: 'http' }] : []);
    }
    // The example's Ingress routes to the gateway's API port, never its metrics port.
    const [ingress] = ofKind('networking.k8s.io/v1/Ingress', example);
    const backends = ingress!.spec!.rules!.flatMap((r) => r.http!.paths.map((p) => p.backend.service));
    expect(backends).toEqual([{ name: 'gateway', port: { name: 'http' } }]);
  });

  it('the ServiceMonitor scrapes every service’s metrics port', () => {
    const [monitor] = ofKind('monitoring.coreos.com/v1/ServiceMonitor', example);
    expect(monitor!.spec.endpoints).toMatchObject([{ port: 'metrics', path: '/metrics' }]);
    const scraped = ofKind('v1/Service', example).filter((s) =>
      (monitor!.spec.selector.matchExpressions ?? []).every((e) => e.values!.includes(s.metadata!.labels![e.key]!)),
    );
    expect(scraped.map((s) => s.metadata!.name).sort()).toEqual([...SERVICES].sort());
    for (const s of scraped) expect(s.spec!.ports!.map((p) => p.name)).toContain('metrics');
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
    expect(deployment('pgbouncer').spec!.replicas).toBeGreaterThanOrEqual(2);
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
    const scaledObjects = ofKind('keda.sh/v1alpha1/ScaledObject', example);
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
