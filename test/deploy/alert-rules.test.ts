// deploy/prometheus/alerts.yaml: checked and unit-tested by Prometheus's own promtool (`check rules`, `test rules`
// on alerts.test.yaml), and every alert there has a test case in which it fires.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/http/spec.js';
import { parseYaml } from '../support/yaml.js';

const DIR = projectPath('deploy/prometheus');
const PROMTOOL = process.env.PROMTOOL_BIN ?? 'promtool';

/** promtool is a required test component, like redis-server: absent, the test fails saying how to install it. */
function promtool(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, args, { cwd: DIR, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw new Error(`${PROMTOOL} did not run (${r.error.message}): apt-get install prometheus (Debian's package ships promtool)`);
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('deploy/prometheus alert rules', () => {
  it('promtool check rules accepts alerts.yaml', () => {
    const r = promtool('check', 'rules', 'alerts.yaml');
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status, r.output).toBe(0);
  });

  it('promtool test rules passes alerts.test.yaml', () => {
    const r = promtool('test', 'rules', 'alerts.test.yaml');
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });

  it('every alert has a case in which it fires, and one in which it stays quiet', () => {
    const alerts: string[] = parseYaml(readFileSync(`${DIR}/alerts.yaml`, 'utf8')).groups.flatMap((g: any) => g.rules.map((r: any) => r.alert));
    const cases = parseYaml(readFileSync(`${DIR}/alerts.test.yaml`, 'utf8')).tests.flatMap((t: any) => t.alert_rule_test);
    for (const alert of alerts) {
      const own = cases.filter((c: any) => c.alertname === alert);
      expect(own.some((c: any) => c.exp_alerts.length > 0), `${alert} fires`).toBe(true);
      expect(own.some((c: any) => c.exp_alerts.length === 0), `${alert} stays quiet`).toBe(true);
    }
  });

  it('a broken expectation fails promtool test rules (the runner is not a no-op)', () => {
    const tests = readFileSync(`${DIR}/alerts.test.yaml`, 'utf8').replace(/severity: critical, job: validation-api, instance: "a:9464", check: geoip/, 'severity: warning, job: validation-api, instance: "a:9464", check: geoip');
    const dir = mkdtempSync(join(tmpdir(), 'vls-promtool-'));
    try {
      writeFileSync(join(dir, 'broken.test.yaml'), tests.replace('  - alerts.yaml', `  - ${DIR}/alerts.yaml`));
      const r = spawnSync(PROMTOOL, ['test', 'rules', join(dir, 'broken.test.yaml')], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/FAILED:[\s\S]*alertname: ValidationApiNotReady/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
