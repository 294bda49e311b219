// Summarise a V8 .cpuprofile (node --cpu-prof): top self-time functions and packages, optionally within a time window.
// Run: node --import tsx bench/cpuprofile-top.ts FILE.cpuprofile [--top 15] [--from US --to US] [--inclusive a,b]
//   --inclusive: time spent in frames matching each pattern (URL substring or function name) and all they call.
//   --from/--to: V8 timestamps in microseconds (the same monotonic clock as process.hrtime on Linux), e.g. the
//   window of a load run, so start-up and shutdown samples are left out. (idle) samples are never counted.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Entry {
  name: string;
  selfMs: number;
  /** Share of the busy (non-idle) time in the window. */
  pct: number;
}

export interface Summary {
  windowMs: number;
  busyMs: number;
  functions: Entry[];
  packages: Entry[];
  /** Inclusive time (the frame or anything it called) of the frames matching each requested pattern. */
  inclusive: Entry[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where a function lives: a package name, a node: builtin, or a project path. */
export function packageOf(url: string): string {
  if (!url) return '(native/V8)';
  if (url.startsWith('node:')) return url.startsWith('node:internal/') ? `node:${url.split('/')[1]}` : url.split('/')[0];
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = path.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

function top(map: Map<string, number>, busy: number, n: number): Entry[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, selfMs: Math.round(us / 100) / 10, pct: busy ? Math.round((us / busy) * 1000) / 10 : 0 }));
}

/**
 * Self time per function and per package over the samples inside [from, to] (µs; default: the whole profile), and
 * inclusive time per pattern (a substring of a frame's URL, or a function name): a sample counts once per pattern.
 */
export function summarise(profiles: CpuProfile[], opts: { from?: number; to?: number; top?: number; inclusive?: string[] } = {}): Summary {
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  const incl = new Map<string, number>((opts.inclusive ?? []).map((p) => [p, 0]));
  let busy = 0;
  let windowUs = 0;
  for (const p of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    /** Patterns matched anywhere on a node's stack, memoised per node. */
    const matched = new Map<number, Set<string>>();
    const stackMatches = (id: number): Set<string> => {
      const hit = matched.get(id);
      if (hit) return hit;
      const up = parent.get(id);
      const set = new Set(up === undefined ? [] : stackMatches(up));
      const f = byId.get(id)!.callFrame;
      for (const pat of incl.keys()) if (f.functionName === pat || (f.url && f.url.includes(pat))) set.add(pat);
      matched.set(id, set);
      return set;
    };
    const from = opts.from ?? p.startTime;
    const to = opts.to ?? p.endTime;
    windowUs = Math.max(windowUs, Math.min(to, p.endTime) - Math.max(from, p.startTime));
    let t = p.startTime;
    for (let i = 0; i < p.samples.length; i++) {
      t += p.timeDeltas[i] ?? 0;
      if (t < from || t > to) continue;
      // A sample stands for the time until the next one.
      const dt = p.timeDeltas[i + 1] ?? 0;
      const node = byId.get(p.samples[i]);
      if (!node || node.callFrame.functionName === '(idle)') continue;
      const { functionName, url, lineNumber } = node.callFrame;
      const name = url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName || '(anonymous)';
      fn.set(name, (fn.get(name) ?? 0) + dt);
      const where = url ? packageOf(url) : functionName || '(native, anonymous)';
      pkg.set(where, (pkg.get(where) ?? 0) + dt);
      for (const pat of stackMatches(node.id)) incl.set(pat, incl.get(pat)! + dt);
      busy += dt;
    }
  }
  const n = opts.top ?? 15;
  const inclusive = top(incl, busy, incl.size).filter((e) => e.selfMs > 0);
  return { windowMs: Math.round(windowUs / 1000), busyMs: Math.round(busy / 1000), functions: top(fn, busy, n), packages: top(pkg, busy, n), inclusive };
}

export function formatSummary(s: Summary): string {
  const line = (e: Entry) => `  ${e.selfMs.toFixed(1).padStart(8)} ms  ${e.pct.toFixed(1).padStart(5)}%  ${e.name}`;
  return [
    `window ${s.windowMs} ms, busy (non-idle) ${s.busyMs} ms`,
    'top self time, functions:',
    ...s.functions.map(line),
    'top self time, by package / file:',
    ...s.packages.map(line),
    ...(s.inclusive.length ? ['inclusive time (frame and callees), by pattern:', ...s.inclusive.map(line)] : []),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '15' }, from: { type: 'string' }, to: { type: 'string' }, inclusive: { type: 'string' } },
  });
  if (positionals.length === 0) {
    process.stderr.write('usage: node --import tsx bench/cpuprofile-top.ts FILE.cpuprofile... [--top N] [--from US --to US] [--inclusive pino,http/auth.js,...]\n');
    process.exit(2);
  }
  const profiles = positionals.map((f) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
  const opt = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const inclusive = values.inclusive?.split(',').filter(Boolean);
  process.stdout.write(`${formatSummary(summarise(profiles, { top: Number(values.top), from: opt(values.from), to: opt(values.to), inclusive }))}\n`);
}
