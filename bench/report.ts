// The bench's one table (rows, footnotes), the ratios from the rotations and the speed targets of the issues.
import type { Rotation } from './session.js';
import { median } from './load.js';

export interface Row {
  id: string;
  label: string;
  status: 'ok' | 'failed' | 'skipped';
  rps: number | null;
  p50: number | null;
  p99: number | null;
  non2xx: number;
  errors: number;
  /** Peak RSS of the measured process (tree) during the run, MB. */
  peakRssMb: number | null;
  /** CPU time of the measured process (tree, every thread) per 2xx answer, microseconds. */
  cpuUsPerReq: number | null;
  /** The load generator's CPU per 2xx answer, microseconds (on its own CPUs where pinned). */
  loaderUsPerReq: number | null;
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

export function emptyRow(id: string, label: string, status: Row['status'], note: string | null): Row {
  return { id, label, status, rps: null, p50: null, p99: null, non2xx: 0, errors: 0, peakRssMb: null, cpuUsPerReq: null, loaderUsPerReq: null, stealPct: null, note };
}

const num = (v: number | null, digits = 0): string => (v === null || Number.isNaN(v) ? '-' : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const HEAD = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx/err', 'peak RSS MB', 'CPU us/req', 'loader us/req', 'steal %'];

function cells(r: Row, failed: (s: string) => string): string[] {
  const state = r.status === 'ok' ? `${r.non2xx}/${r.errors}` : failed(r.status.toUpperCase());
  return [r.label, num(r.rps), num(r.p50, 2), num(r.p99, 2), state, num(r.peakRssMb, 1), num(r.cpuUsPerReq, 1), num(r.loaderUsPerReq, 1), num(r.stealPct, 1)];
}

/** The table as aligned text (markdown: false) or as Markdown, with numbered notes. */
export function formatTable(rows: Row[], markdown = false): string {
  const notes: string[] = [];
  const body = rows.map((r) => {
    const c = cells(r, (s) => (markdown ? `**${s}**` : s));
    if (r.note) notes.push(r.note);
    return [...c, r.note ? `[${notes.length}]` : ''];
  });
  const head = [...HEAD, ''];
  if (markdown) {
    const out = [`| ${head.join(' | ')} |`, `|---|${head.slice(1).map(() => '---:').join('|')}|`, ...body.map((b) => `| ${b.join(' | ')} |`)];
    return [...out, '', ...notes.map((n, i) => `${i + 1}. ${n.replace(/\|/g, '\\|')}`)].join('\n');
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), '', ...notes.map((n, i) => `[${i + 1}] ${n}`)].join('\n');
}

/** Per rotation: each side's median req/s and CPU per answer, and the rounds' steal and load. */
export function formatRotations(rotations: Rotation[]): string {
  return rotations
    .filter((r) => r.sides.length > 1)
    .map((r) => {
      const all = r.slices.flat();
      const head = `${r.name} (${r.loader}, ${r.slices[0].length} rounds; steal median ${median(all.map((s) => s.stealPct)).toFixed(1)}%, load ${median(all.map((s) => s.load1)).toFixed(2)})`;
      const lines = r.sides.map((s, i) => {
        const sl = r.slices[i];
        const rps = median(sl.map((x) => x.rps));
        return `  ${s.label.padEnd(32)} ${num(rps).padStart(7)} req/s  CPU ${median(sl.map((x) => x.cpuUsPerReq)).toFixed(1)} us/req  p99 ${median(sl.map((x) => x.p99)).toFixed(2)} ms  rounds ${sl.map((x) => Math.round(x.rps)).join(', ')}`;
      });
      return [head, ...lines].join('\n');
    })
    .join('\n');
}

type RatioOf = (x: string, y: string) => number | null;

/** Every speed target, judged on this run's rows and on ratios within rotations (`ratio(x, y)`: x's req/s / y's). */
export function evaluateTargets(rows: Row[], ratio: RatioOf, agreement: { wrk: number; autocannon: number } | null): Target[] {
  const get = (id: string): Row | null => rows.find((r) => r.id === id && r.status === 'ok') ?? null;
  const out: Target[] = [];
  const add = (issue: number, what: string, goal: string, value: number | null, met: (v: number) => boolean, fmt: (v: number) => string = (v) => `${v.toFixed(2)}x`) =>
    out.push({ issue, what, goal, value: value === null ? 'not measured' : fmt(value), met: value === null ? null : met(value) });
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const div = (a: number | null | undefined, b: number | null | undefined) => (a != null && b ? a / b : null);
  // Issue #58 (on the fixed bench: pinned, warm-up discarded, five rounds in turn): ahead of the Fastify peer.
  for (const id of ['bic', 'iban', 'card']) add(58, `${id} req/s vs the Fastify peer's BIC (in turn)`, '>= 1.1x', ratio(id, 'fastify-peer'), (v) => v >= 1.1);
  add(58, 'BIC req/s vs IP (in turn)', '>= 1.0x', ratio('bic', 'ip'), (v) => v >= 1);
  const bicP = get('bic')?.p99;
  const peerP = get('fastify-peer')?.p99;
  add(48, `BIC p99 vs the Fastify peer's p99 (in turn${bicP && peerP ? `: ${ms(bicP)} vs ${ms(peerP)}` : ''})`, '<= 1.0x', div(bicP, peerP), (v) => v <= 1);
  if (agreement) add(58, `BIC vs peer: wrk ${agreement.wrk.toFixed(2)}x, autocannon ${agreement.autocannon.toFixed(2)}x (second harness / first)`, 'within 10%', agreement.autocannon / agreement.wrk, (v) => Math.abs(v - 1) <= 0.1);
  // Issue #26 set the floor for the designed stack (Koa + openapi-backend on every request) at 0.4x bare Koa.
  for (const id of ['bic', 'iban', 'card', 'ip']) {
    add(26, `${id} req/s vs bare Koa (in turn)`, '>= 0.4x', ratio(id, 'koa'), (v) => v >= 0.4);
    add(26, `${id} p99 at 32 connections`, '< 15 ms', get(id)?.p99 ?? null, (v) => v < 15, ms);
  }
  for (const id of ['iban', 'card']) add(3, `${id} req/s vs BIC (in turn)`, '>= 0.7x', ratio(id, 'bic'), (v) => v >= 0.7);
  add(6, 'IP req/s vs BIC (in turn)', '>= 0.7x', ratio('ip', 'bic'), (v) => v >= 0.7);
  add(4, 'password (12 chars, warm range cache) req/s', '>= 150/s', get('password')?.rps ?? null, (v) => v >= 150, (v) => `${v.toFixed(0)}/s`);
  // Issue #29: crafted input costs at most 5x a typical one, in CPU per request of every thread.
  add(29, 'crafted password (128 ch) CPU per request vs a 12-character one', '<= 5x', div(get('password-crafted')?.cpuUsPerReq, get('password')?.cpuUsPerReq), (v) => v <= 5);
  add(4, 'BIC p99 while the password endpoint is saturated', '< 25 ms', get('bic-under-password')?.p99 ?? null, (v) => v < 25, ms);
  // Issue #27 (limits counted by rate-limiter-flexible): 0.85x embedded, 0.5x with Redis, against limits off.
  const off = ratio('bic-limits-off', 'bic-limits-off:versus');
  add(27, 'BIC limits on (embedded) vs limits off, in turn', '>= 0.85x', off ? 1 / off : null, (v) => v >= 0.85);
  add(27, 'BIC limits on (Redis) vs limits off, in turn', '>= 0.5x', ratio('bic-redis', 'bic-redis:versus'), (v) => v >= 0.5);
  add(8, 'BIC WORKERS=2 vs WORKERS=1 (both on Redis), in turn', '>= 1.6x', ratio('bic-workers-2', 'bic-workers-2:versus'), (v) => v >= 1.6);
  for (const id of ['dns', 'email', 'tls']) add(8, `${id} (warm cache) p50 vs BIC p50`, '<= 2x', div(get(id)?.p50, get('bic')?.p50), (v) => v <= 2);
  return out;
}

export function formatTargets(targets: Target[], markdown = false): string {
  if (!markdown) return targets.map((t) => `${t.met === null ? 'n/a ' : t.met ? 'MET ' : 'MISS'}  #${t.issue} ${t.what}: ${t.value} (target ${t.goal})`).join('\n');
  const lines = targets.map((t) => `| #${t.issue} | ${t.what} | ${t.goal} | ${t.value} | ${t.met === null ? 'n/a' : t.met ? 'yes' : '**no**'} |`);
  return ['| issue | target | goal | this run | met |', '|---|---|---|---|---|', ...lines].join('\n');
}
