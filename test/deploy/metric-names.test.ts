// The dashboard (deploy/grafana) and the alert rules (deploy/prometheus) name only series the service exports: every
// metric name and label in their PromQL is read from a real /metrics of the service, on the embedded store and on
// Redis (some series exist in one mode only).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../src/http/spec.js';
import { startHarness, type Harness } from '../support/harness.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { parseYaml } from '../support/yaml.js';

/** Series Prometheus makes itself for every target, and the labels it adds to every series it scrapes. */
const SYNTHETIC = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);
const TARGET_LABELS = new Set(['job', 'instance']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

export interface Selector {
  metric: string;
  labels: string[];
}

/**
 * The series selectors of a PromQL expression (Grafana's `$variables` allowed): each metric name with the label names
 * its matchers use. Functions and aggregations (a name before `(`), keywords, grouping label lists, durations and
 * strings are not selectors.
 */
export function selectors(expr: string): Selector[] {
  let e = expr
    .replace(/\$\{?\w+\}?/g, 'VAR') // Grafana variables ($job, ${datasource}, $__rate_interval)
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\[[^\]]*\]/g, '') // range and subquery durations
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const out: Selector[] = [];
  // A name with its matchers, or matchers alone ({__name__="..."} is not used here and would be reported as "").
  const re = /([A-Za-z_:][\w:]*)?\s*(\{[^}]*\})?/g;
  for (const m of e.matchAll(re)) {
    if (!m[0].trim()) continue;
    const name = m[1];
    const after = e.slice((m.index ?? 0) + m[0].length);
    if (name && !m[2] && /^\s*\(/.test(after)) continue; // a function or an aggregation
    if (name && (KEYWORDS.has(name.toLowerCase()) || name === 'VAR')) continue;
    if (!name && !m[2]) continue;
    const labels = m[2] ? [...m[2].matchAll(/([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!) : [];
    out.push({ metric: name ?? '', labels });
  }
  return out;
}

/** Every PromQL expression of the dashboard: panel targets (rows nest panels) and query variables. */
function dashboardExprs(dashboard: any): string[] {
  const exprs: string[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) exprs.push(t.expr);
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list) {
    const q = typeof v.query === 'object' ? v.query?.query : v.type === 'query' ? v.query : null;
    if (!q) continue;
    // label_values(SELECTOR, LABEL): the selector is PromQL, the label is one of its labels.
    const lv = /^label_values\((.*),\s*(\w+)\)$/.exec(q);
    exprs.push(lv ? `${lv[1]}` : q);
  }
  return exprs;
}

function alertExprs(): string[] {
  const rules = parseYaml(readFileSync(projectPath('deploy/prometheus/alerts.yaml'), 'utf8'));
  return rules.groups.flatMap((g: any) => g.rules.map((r: any) => r.expr));
}

/** Exported series names with the label names each carries, from exposition text. */
function exported(text: string, into: Map<string, Set<string>>): void {
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*)(?:\{([^}]*)\})?\s/.exec(line);
    if (!m) continue;
    const labels = into.get(m[1]!) ?? new Set<string>();
    for (const l of (m[2] ?? '').matchAll(/([A-Za-z_]\w*)="/g)) labels.add(l[1]!);
    into.set(m[1]!, labels);
  }
}

describe('selectors(): the PromQL reader of this test', () => {
  it.each([
    ['up{job="$job"} == 0', [{ metric: 'up', labels: ['job'] }]],
    ['sum by (operationId) (rate(http_requests_total{job="$job",status=~"5.."}[$__rate_interval]))', [{ metric: 'http_requests_total', labels: ['job', 'status'] }]],
    ['histogram_quantile(0.99, sum by (job, le) (rate(a_bucket[5m]))) > 0.25', [{ metric: 'a_bucket', labels: [] }]],
    ['(x{check=~"keys|limits"} == 0) and on (job, instance) y', [{ metric: 'x', labels: ['check'] }, { metric: 'y', labels: [] }]],
    ['absent(up{job="validation-api"} == 1)', [{ metric: 'up', labels: ['job'] }]],
    ['increase(not_exported_total[5m]) > 0', [{ metric: 'not_exported_total', labels: [] }]],
  ])('%s', (expr, expected) => {
    expect(selectors(expr)).toEqual(expected);
  });
});

describe('deploy/: every metric the dashboard and the alerts use is exported', () => {
  let redis: TestRedis;
  const harnesses: Harness[] = [];
  const series = new Map<string, Set<string>>();

  beforeAll(async () => {
    redis = await startRedisServer();
    // Node's process metrics on (the dashboard's process row), as in production.
    // SMTP verification on in one of them (its series exist only then; nothing is dialled).
    const smtp = { SMTP_CHECK: 'on', SMTP_HELO_NAME: 'verifier.example.net', SMTP_MAIL_FROM: 'check@verifier.example.net' };
    for (const env of [smtp, { REDIS_URL: redis.url }] as Record<string, string>[]) {
      const h = await startHarness(env, { defaultMetrics: true });
      harnesses.push(h);
      // A request of each kind the histograms and counters label.
      await h.call('/api/v1/bic/DEUTDEFF');
      const res = await h.fetch('/metrics');
      expect(res.status).toBe(200);
      exported(await res.text(), series);
    }
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    await redis?.stop();
  });

  const dashboard = JSON.parse(readFileSync(projectPath('deploy/grafana/validation-api.json'), 'utf8'));
  const sources: [string, string[]][] = [
    ['deploy/grafana/validation-api.json', dashboardExprs(dashboard)],
    ['deploy/prometheus/alerts.yaml', alertExprs()],
  ];

  it.each(sources)('%s', (_file, exprs) => {
    expect(exprs.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const expr of exprs) {
      const found = selectors(expr);
      if (found.length === 0) problems.push(`no series in: ${expr}`);
      for (const { metric, labels } of found) {
        if (SYNTHETIC.has(metric)) continue;
        const have = series.get(metric);
        if (!have) {
          problems.push(`${metric} is not exported (in: ${expr.trim()})`);
          continue;
        }
        for (const l of labels) if (!TARGET_LABELS.has(l) && !have.has(l)) problems.push(`${metric} has no label ${l}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the series of one mode only are exported in that mode (both harnesses were read)', () => {
    expect(series.has('store_last_write_age_seconds')).toBe(true); // embedded store
    expect(series.has('limits_counted_alone_total')).toBe(true); // Redis
    expect(series.has('process_cpu_seconds_total')).toBe(true); // Node's process metrics
  });

  it('a dashboard naming a series the service does not export would fail this test', () => {
    const bogus = selectors('rate(http_requests_totl{job="$job"}[5m])').map((s) => s.metric);
    expect(bogus.filter((m) => !series.has(m))).toEqual(['http_requests_totl']);
  });

  it('the dashboard: unique panel ids, every target on the data source variable', () => {
    const all: any[] = [];
    const walk = (panels: any[]) => panels?.forEach((p) => (all.push(p), walk(p.panels)));
    walk(dashboard.panels);
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    for (const p of all.filter((q) => q.type !== 'row')) {
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      expect(p.targets.length, p.title).toBeGreaterThan(0);
    }
  });
});
