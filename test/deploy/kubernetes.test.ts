// deploy/kubernetes: every manifest validated offline against the Kubernetes API schemas (kubernetes-models), and
// held to what the image and the service need (probes, the image's user, read-only root, Redis from a Secret).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/http/spec.js';
import { parseYaml, parseYamlDocuments } from '../support/yaml.js';

const DIR = projectPath('deploy/kubernetes');

/** The API schema of each kind the manifests may hold; any other kind fails the test. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'v1 Service': Service,
  'v1 ServiceAccount': ServiceAccount,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
};

const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const manifests = files.flatMap((file) =>
  parseYamlDocuments(readFileSync(join(DIR, file), 'utf8')).map((obj: Record<string, any>) => ({ file, obj })),
);
const only = (kind: string) => {
  const found = manifests.filter((m) => m.obj.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!.obj;
};
const validate = (obj: Record<string, any>) => {
  const Model = MODELS[`${obj.apiVersion} ${obj.kind}`];
  if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate();
};

describe('deploy/kubernetes', () => {
  it('kustomization.yaml lists every manifest of the folder', () => {
    const kustomization = parseYaml(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'));
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it.each(manifests.map((m) => [`${m.file}: ${m.obj.kind}`, m.obj] as const))('%s is valid against its API schema', (_name, obj) => {
    expect(() => validate(obj)).not.toThrow();
  });

  it('the validator refuses a manifest that breaks the schema (a port by the wrong type, a probe without a handler port)', () => {
    const broken = structuredClone(named('Deployment', 'validation-api'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(() => validate(broken)).toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(named('Deployment', 'validation-api'));
    delete noSelector.spec.selector;
    expect(() => validate(noSelector)).toThrow(/selector/);
  });

  const named = (kind: string, name: string) => {
    const found = manifests.filter((m) => m.obj.kind === kind && m.obj.metadata.name === name);
    expect(found, `${kind} ${name}`).toHaveLength(1);
    return found[0]!.obj;
  };
  const deployment = named('Deployment', 'validation-api');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  it('probes: liveness on /healthz, readiness on /readyz, on a port the container declares', () => {
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    const ports = container.ports.map((p: any) => p.name);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) expect(ports).toContain(probe.httpGet.port);
  });

  it("runs as the image's own non-root user with a read-only root and no privilege", () => {
    const uid = Number(/echo 'vls:x:(\d+):/.exec(readFileSync(projectPath('Containerfile'), 'utf8'))![1]);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: uid, fsGroup: uid });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(pod.automountServiceAccountToken).toBe(false);
    // The only writable paths: DATA_DIR (the image's /data) and /tmp.
    expect(container.volumeMounts.map((v: any) => v.mountPath).sort()).toEqual(['/data', '/tmp']);
  });

  it('asks for resources, and gives the drain more time than SHUTDOWN_TIMEOUT_MS', () => {
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits.memory).toEqual(expect.any(String));
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(10 + (container.lifecycle?.preStop?.sleep?.seconds ?? 0));
  });

  it('takes REDIS_URL from a Secret, and sets only variables the service reads', () => {
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e]));
    expect(env.REDIS_URL.valueFrom.secretKeyRef).toMatchObject({ name: expect.any(String), key: expect.any(String) });
    expect(env.REDIS_URL.value).toBeUndefined();
    const configSource = readFileSync(projectPath('src/config.ts'), 'utf8');
    for (const name of Object.keys(env)) {
      // OTEL_* are the OpenTelemetry SDK's own (docs/observability.md, "Tracing").
      if (!name.startsWith('OTEL_')) expect(configSource, name).toContain(`'${name}'`);
    }
    expect(env.METRICS_PORT.value).toBe(String(container.ports.find((p: any) => p.name === 'metrics').containerPort));
    expect(deployment.spec.template.metadata.annotations['prometheus.io/port']).toBe(env.METRICS_PORT.value);
  });

  it('Service, PodDisruptionBudget and HorizontalPodAutoscaler reach the Deployment', () => {
    const labels = deployment.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
    const service = only('Service');
    for (const [k, v] of Object.entries(service.spec.selector)) expect(labels[k]).toBe(v);
    expect(container.ports.map((p: any) => p.name)).toContain(service.spec.ports[0].targetPort);
    const pdb = only('PodDisruptionBudget');
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    const hpa = only('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name });
    // A PDB that lets one pod go needs two to keep one serving.
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(pod.serviceAccountName).toBe(only('ServiceAccount').metadata.name);
  });

  describe('the job workers (job-worker-deployment.yaml)', () => {
    const workers = named('Deployment', 'validation-api-job-worker');
    const wpod = workers.spec.template.spec;
    const worker = wpod.containers[0];
    const wenv = Object.fromEntries(worker.env.map((e: any) => [e.name, e]));

    it('run the job worker of the same image, on the same Redis, scraped on METRICS_PORT', () => {
      expect(worker.image).toBe(container.image);
      expect(worker.command).toEqual(['node', '--max-semi-space-size=8', '--max-old-space-size=96', 'dist/src/job-worker.js']);
      expect(wenv.REDIS_URL.valueFrom.secretKeyRef).toEqual(Object.fromEntries(container.env.map((e: any) => [e.name, e])).REDIS_URL.valueFrom.secretKeyRef);
      expect(wenv.METRICS_PORT.value).toBe(String(worker.ports.find((p: any) => p.name === 'metrics').containerPort));
      expect(workers.spec.template.metadata.annotations['prometheus.io/port']).toBe(wenv.METRICS_PORT.value);
      expect(worker.livenessProbe.httpGet).toEqual({ path: '/metrics', port: 'metrics' });
    });

    it('leave the jobs to the workers: the API pods run JOBS_WORKER=off, and no Service reaches a worker', () => {
      expect(container.env.find((e: any) => e.name === 'JOBS_WORKER')?.value).toBe('off');
      const labels = workers.spec.template.metadata.labels;
      const service = only('Service');
      expect(Object.entries(service.spec.selector).every(([k, v]) => labels[k] === v)).toBe(false);
      for (const [k, v] of Object.entries(workers.spec.selector.matchLabels)) expect(labels[k]).toBe(v);
    });

    it('run like the API pods: non-root, read-only root, no privilege, a grace period for the items in hand', () => {
      expect(wpod.securityContext).toEqual(pod.securityContext);
      expect(worker.securityContext).toEqual(container.securityContext);
      expect(wpod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
      expect(worker.volumeMounts.map((v: any) => v.mountPath).sort()).toEqual(['/data', '/tmp']);
    });
  });
});
