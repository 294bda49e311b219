// The bench's one table (rows, ratios to the baselines, footnotes) and the speed targets of issues 3, 4, 6, 7, 8 and 48.

export interface Row {
  id: string;
  label: string;
  status: 'ok' | 'failed' | 'skipped';
  rps: number | null;
  p50: number | null;
  p99: number | null;
  non2xx: number;
  errors: number;
  vsKoa: number | null;
  vsHttp: number | null;
  /** Peak RSS of the measured process (tree) during the run, MB. */
  peakRssMb: number | null;
  /** CPU time of the measured process (tree) per response, microseconds. */
  cpuUsPerReq: number | null;
  /** Host CPU steal during the measurement, percent (the hypervisor's share; noise, not the service). */
  stealPct: number | null;
  note: string | null;
}

export interface Target {
  issue: number;
  what: string;
  goal: string;
  value: string;
  /** null: could not be measured in this run. */
  met: boolean | null;
}

export function emptyRow(id: string, label: string, status: Row['status'], note: string): Row {
  return { id, label, status, rps: null, p50: null, p99: null, non2xx: 0, errors: 0, vsKoa: null, vsHttp: null, peakRssMb: null, cpuUsPerReq: null, stealPct: null, note };
}

/** Fill in the ratios once both baselines are known. */
export function addRatios(rows: Row[]): void {
  const koa = rows.find((r) => r.id === 'koa')?.rps ?? null;
  const http = rows.find((r) => r.id === 'http')?.rps ?? null;
  for (const r of rows) {
    r.vsKoa = r.rps !== null && koa ? r.rps / koa : null;
    r.vsHttp = r.rps !== null && http ? r.rps / http : null;
  }
}

const num = (v: number | null, digits = 0): string => (v === null || Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const ratio = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}x`);

export function formatTable(rows: Row[]): string {
  const notes: string[] = [];
  const head = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx/err', 'vs Koa', 'vs node:http', 'peak RSS MB', 'CPU us/req', 'steal %', ''];
  const body = rows.map((r) => {
    let mark = '';
    if (r.note) {
      notes.push(r.note);
      mark = `[${notes.length}]`;
    }
    const state = r.status === 'ok' ? `${r.non2xx}/${r.errors}` : r.status.toUpperCase();
    return [r.label, num(r.rps), num(r.p50, 2), num(r.p99, 2), state, ratio(r.vsKoa), ratio(r.vsHttp), num(r.peakRssMb, 1), num(r.cpuUsPerReq, 1), num(r.stealPct, 1), mark];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
  if (notes.length) out.push('', ...notes.map((n, i) => `[${i + 1}] ${n}`));
  return out.join('\n');
}

export function formatTargets(targets: Target[]): string {
  return targets
    .map((t) => `${t.met === null ? 'n/a ' : t.met ? 'MET ' : 'MISS'}  #${t.issue} ${t.what}: ${t.value} (target ${t.goal})`)
    .join('\n');
}

/** Every speed target from the issues, judged on this run's rows and alternated pairs (`ratio` = row / versus). */
export function evaluateTargets(
  rows: Row[],
  pairs: Array<{ id: string; ratio: number; rps: number; versusRps: number; cpuUsPerReq: number | null; versusCpuUsPerReq?: number | null; loaderUsPerReq: number | null; p99?: number; versusP99?: number }>,
  opts: { realGeoDbs: boolean; cores: number },
): Target[] {
  const get = (id: string): Row | null => {
    const r = rows.find((x) => x.id === id);
    return r && r.status === 'ok' ? r : null;
  };
  const out: Target[] = [];
  const add = (issue: number, what: string, goal: string, value: number | null, met: (v: number) => boolean, fmt: (v: number) => string) =>
    out.push({ issue, what, goal, value: value === null ? 'not measured' : fmt(value), met: value === null ? null : met(value) });
  const x = (v: number) => `${v.toFixed(2)}x`;
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const div = (a: number | null | undefined, b: number | null | undefined) => (a != null && b ? a / b : null);

  const bic = get('bic');
  const pair = (id: string): number | null => pairs.find((p) => p.id === id)?.ratio ?? null;
  // Ratios to Koa and to BIC from the rotation of Koa and the four endpoints where measured (medians of per-round
  // ratios), else from the rows.
  const vsKoa = (id: string): { v: number | null; how: string } => {
    const p = get(id) ? pair(`${id}-vs-koa`) : null;
    return p !== null ? { v: p, how: 'in turn with Koa' } : { v: get(id)?.vsKoa ?? null, how: 'rows' };
  };
  const vsBic = (id: string): { v: number | null; how: string } => {
    const direct = get(id) && bic ? pair(`${id}-vs-bic`) : null;
    if (direct !== null) return { v: direct, how: 'in turn with BIC' };
    const a = vsKoa(id);
    const b = vsKoa('bic');
    if (a.how !== 'rows' && b.how !== 'rows') return { v: div(a.v, b.v), how: 'each alternated with Koa' };
    return { v: div(get(id)?.rps, bic?.rps), how: 'rows' };
  };
  // Issue #26 set the floor for the designed stack (Koa + openapi-backend on every request) at 0.4x, replacing #8's 0.5x.
  for (const id of ['bic', 'iban', 'card', 'ip']) {
    const k = vsKoa(id);
    add(26, `${id} req/s vs bare Koa (${k.how})`, '>= 0.4x', k.v, (v) => v >= 0.4, x);
    add(26, `${id} p99 at 32 connections`, '< 15 ms', get(id)?.p99 ?? null, (v) => v < 15, ms);
  }
  for (const id of ['iban', 'card']) {
    const b = vsBic(id);
    add(3, `${id} req/s vs BIC (${b.how})`, '>= 0.7x', b.v, (v) => v >= 0.7, x);
  }
  add(4, 'password (12 chars, warm range cache) req/s', '>= 150/s', get('password')?.rps ?? null, (v) => v >= 150, (v) => `${v.toFixed(0)}/s`);
  // Issue #29: "bound the cost per request so that crafted input costs at most 5x a typical one": the service's CPU
  // per request (every thread: HTTP, the estimate in the pool, the breach check), crafted and typical in turn.
  const crafted = get('password-crafted') ? pairs.find((p) => p.id === 'password-crafted-vs-password') : undefined;
  const craftedCost = crafted?.cpuUsPerReq != null && crafted.versusCpuUsPerReq ? crafted.cpuUsPerReq / crafted.versusCpuUsPerReq : null;
  add(29, 'crafted password (128 ch) CPU per request vs a 12-character one (in turn)', '<= 5x', craftedCost, (v) => v <= 5, x);
  add(4, 'BIC p99 while the password endpoint is saturated', '< 25 ms', get('bic-under-password')?.p99 ?? null, (v) => v < 25, ms);
  const ipBic = vsBic('ip');
  add(6, `IP req/s vs BIC (${ipBic.how})`, '>= 0.7x', ipBic.v, (v) => v >= 0.7, x);
  const ipRss = get('ip')?.peakRssMb ?? null;
  out.push({
    issue: 6,
    what: `peak RSS with both GeoIP databases open${opts.realGeoDbs ? ' (GeoLite2 City + ASN)' : ' (MaxMind TEST databases: not representative)'}`,
    goal: '< 250 MB',
    value: ipRss === null ? 'not measured' : `${ipRss.toFixed(1)} MB`,
    met: ipRss === null || !opts.realGeoDbs ? null : ipRss < 250,
  });
  // Issue #48: ahead of what a user would pick instead (bench/fastify-peer.ts), and BIC (a pattern and a table read)
  // at least as fast as IP geolocation; both in the same rotation as the ratios to Koa.
  const peer = bic ? pairs.find((p) => p.id === 'bic-vs-fastify-peer') : undefined;
  add(48, 'BIC req/s vs Fastify peer (in turn)', '>= 0.9x', peer?.ratio ?? null, (v) => v >= 0.9, x);
  const bicIp = get('ip') ? pair('ip-vs-bic') : null;
  add(48, 'BIC req/s vs IP (in turn with BIC)', '>= 1.0x', bicIp ? 1 / bicIp : null, (v) => v >= 1, x);
  const p99s = peer?.p99 != null && peer.versusP99 != null ? peer.p99 / peer.versusP99 : null;
  add(48, `BIC p99 vs Fastify peer p99 (in turn${peer?.p99 != null ? `: ${ms(peer.p99)} vs ${ms(peer.versusP99!)}` : ''})`, '<= 1.0x', p99s, (v) => v <= 1, x);
  const rowPair = (id: string): number | null => (get(id) ? pair(id) : null);
  const offRatio = rowPair('bic-limits-off');
  // Issue #27 (limits counted by rate-limiter-flexible) keeps #7's 0.85x embedded and sets 0.5x with Redis.
  add(27, 'BIC limits on (embedded) vs limits off, alternated', '>= 0.85x', offRatio ? 1 / offRatio : null, (v) => v >= 0.85, x);
  add(27, 'BIC limits on (Redis) vs limits off, alternated', '>= 0.5x', rowPair('bic-redis'), (v) => v >= 0.5, x);
  // The cores two workers used, and the cores 1.6x would take at their CPU per request: on a small host that also runs
  // the load generator and Redis, when the second figure nears the number of cores only a cheaper request can meet it.
  // The ceiling: the host's cores over the CPU one response costs the workers and the load generator together, as a
  // ratio to one worker's rate (Redis's own CPU left out, so the true ceiling is lower still). At these costs two workers
  // cannot pass it here; a cheaper request lowers it, since the generator's share of each response grows.
  const w = pairs.find((p) => p.id === 'bic-workers-2');
  const cores = (rps: number) => (w?.cpuUsPerReq ? (rps * w.cpuUsPerReq) / 1e6 : null);
  const used = w ? cores(w.rps) : null;
  const needed = w ? cores(1.6 * w.versusRps) : null;
  const ceiling = w?.cpuUsPerReq && w.loaderUsPerReq !== null ? (opts.cores * 1e6) / (w.cpuUsPerReq + w.loaderUsPerReq) / w.versusRps : null;
  const why: string[] = [];
  if (used !== null && needed !== null) {
    why.push(`2 workers used ${used.toFixed(2)} of ${opts.cores} cores; 1.6x at their CPU per request needs ${needed.toFixed(2)}`);
  }
  if (ceiling !== null) {
    why.push(`with the load generator's ${w!.loaderUsPerReq!.toFixed(1)} us per response beside them, ${opts.cores} cores cap the ratio near ${x(ceiling)}`);
  }
  const withCores = (v: number) => `${x(v)}${why.length ? ` (${why.join('; ')})` : ''}`;
  add(8, 'BIC WORKERS=2 vs WORKERS=1 (both on Redis), alternated', '>= 1.6x', rowPair('bic-workers-2'), (v) => v >= 1.6, withCores);
  for (const id of ['dns', 'email', 'tls']) {
    add(8, `${id} (warm cache) p50 vs BIC p50`, '<= 2x', div(get(id)?.p50, bic?.p50), (v) => v <= 2, x);
  }
  return out;
}

/** The same table and targets as Markdown (bench/results/latest.md), for BENCHMARKS.md. */
export function formatMarkdown(header: string, rows: Row[], targets: Target[]): string {
  const notes: string[] = [];
  const out = [
    header,
    '',
    '| endpoint | req/s | p50 ms | p99 ms | non-2xx/err | vs Koa | vs node:http | peak RSS MB | CPU us/req | steal % | note |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    if (r.note) notes.push(r.note);
    const state = r.status === 'ok' ? `${r.non2xx}/${r.errors}` : `**${r.status.toUpperCase()}**`;
    const cells = [r.label, num(r.rps), num(r.p50, 2), num(r.p99, 2), state, ratio(r.vsKoa), ratio(r.vsHttp), num(r.peakRssMb, 1), num(r.cpuUsPerReq, 1), num(r.stealPct, 1), r.note ? `[${notes.length}]` : ''];
    out.push(`| ${cells.join(' | ')} |`);
  }
  if (notes.length) out.push('', ...notes.map((n, i) => `${i + 1}. ${n.replace(/\|/g, '\\|')}`));
  out.push('', '| issue | target | goal | this run | met |', '|---|---|---|---|---|');
  for (const t of targets) out.push(`| #${t.issue} | ${t.what} | ${t.goal} | ${t.value} | ${t.met === null ? 'n/a' : t.met ? 'yes' : '**no**'} |`);
  return `${out.join('\n')}\n`;
}
