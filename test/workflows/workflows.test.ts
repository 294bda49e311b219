// Live contract workflows: `redocly respect` runs the Arazzo file against a real server with real DNS, TLS and GeoIP fixtures.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startValidTlsTarget, type RunningServer } from '../support/tls-fixtures.js';
import { parseYaml } from '../support/yaml.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOWS = 'test/workflows/validation.arazzo.yaml';
const BREACHED = 'P@ssw0rd';

interface RespectRun {
  code: number | null;
  output: string;
  report: any;
}

let dns: TestDnsServer;
let tls: RunningServer;
let h: Harness;
let dir: string;

/** Run respect as a child process (async: the server under test lives in this process). */
function respect(env: Record<string, string>): Promise<RespectRun> {
  const jsonOut = join(dir, 'respect.json');
  const args = ['--no-install', 'redocly', 'respect', WORKFLOWS, '--server', `api=${h.url}`, '--json-output', jsonOut, '--max-fetch-timeout', '60000'];
  return new Promise((resolve, reject) => {
    const child = spawn('npx', args, {
      cwd: ROOT,
      env: { ...process.env, ...env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1', NPM_CONFIG_UPDATE_NOTIFIER: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let report: any = null;
      try {
        report = JSON.parse(readFileSync(jsonOut, 'utf8'));
      } catch {
        report = null;
      }
      resolve({ code, output, report });
    });
  });
}

/** Every step of the report, nested workflows flattened. */
function steps(report: any): any[] {
  const flat = (items: any[]): any[] => items.flatMap((s) => (s.type === 'step' ? [s] : flat(s.executedSteps ?? [])));
  return Object.values(report.files as Record<string, any>).flatMap((f: any) => flat(f.executedWorkflows));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vls-workflows-'));
  const { server, pki } = await startValidTlsTarget('Workflows', ['secure.test']);
  tls = server;
  dns = await startDnsServer({
    'mail.test': [
      { type: 'SOA', data: { mname: 'ns1.mail.test', rname: 'hostmaster.mail.test', serial: 1, minimum: 60 } },
      { type: 'A', data: '192.0.2.10' },
      { type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' } },
      { type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' },
    ],
    '_dmarc.mail.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:dmarc@mail.test' }],
    'secure.test': [{ type: 'A', data: '127.0.0.1' }],
  });
  writeFileSync(join(dir, 'ca.pem'), pki.root.certPem);
  const sha1 = createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
  writeFileSync(join(dir, `${sha1.slice(0, 5)}.txt`), `${sha1.slice(5)}:4242\n`);
  // TCP (below): the client is `redocly respect`, another process.
  h = await startHarness({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '10000',
    TLS_INSPECT_PORT: String(tls.port),
    TLS_EXTRA_CA_FILE: join(dir, 'ca.pem'),
    TLS_TIMEOUT_MS: '10000',
    ALLOW_PRIVATE_TARGETS: 'true',
    PWNED_PASSWORDS_DIR: dir,
    TRUST_PROXY: 'true',
  }, { tcp: true });
});

afterAll(async () => {
  await h?.close();
  await tls?.close();
  await dns?.close();
  if (dir && !process.env.KEEP_WORKFLOW_DIR) rmSync(dir, { recursive: true, force: true });
});

describe(`redocly respect ${WORKFLOWS}`, () => {
  it('has a step for every operation of openapi.yaml', () => {
    const spec = parseYaml(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8'));
    // The System tag's routes (/healthz, /metrics...) are no API operations: no key, no workflow.
    const documented = Object.values(spec.paths as Record<string, Record<string, any>>).flatMap((item) =>
      Object.values(item)
        .filter((op) => op?.operationId && !op.tags?.includes('System'))
        .map((op) => op.operationId),
    );
    const arazzo = parseYaml(readFileSync(join(ROOT, WORKFLOWS), 'utf8'));
    const exercised = new Set(arazzo.workflows.flatMap((w: any) => w.steps.map((s: any) => s.operationId)));
    expect(documented.filter((id: string) => !exercised.has(id))).toEqual([]);
  });

  it('passes every workflow against the running server, answers checked against openapi.yaml', { timeout: 300_000 }, async () => {
    const limited = await h.composition.keyStore.create({ name: 'workflows-limited', perMinute: 1 });
    await h.composition.keys.refresh();
    const run = await respect({ VLS_API_KEY: h.key, VLS_LIMITED_KEY: limited.key });
    expect(run.report, run.output).not.toBeNull();
    const failed = steps(run.report)
      .filter((s) => s.status !== 'success')
      .map((s) => `${s.workflowId}/${s.stepId}: ${s.checks.filter((c: any) => !c.passed).map((c: any) => `${c.name} ${c.message ?? ''}`).join('; ')}`);
    expect(failed).toEqual([]);
    expect(run.report.status).toBe('success');
    expect(run.code, run.output).toBe(0);
    const arazzo = parseYaml(readFileSync(join(ROOT, WORKFLOWS), 'utf8'));
    const declared = arazzo.workflows.reduce((n: number, w: any) => n + w.steps.length, 0);
    expect(steps(run.report)).toHaveLength(declared);
  });

  it('does not leak the API keys into its report', async () => {
    const report = readFileSync(join(dir, 'respect.json'), 'utf8');
    expect(report).not.toContain(h.key);
  });
});
