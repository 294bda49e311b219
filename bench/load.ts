// One load run, always in a child process pinned to the load generator's CPUs (cpu-usage.ts, cpuPlan): wrk (C, a Lua
// script for bodies and the counts), autocannon or `paced` (a Node child running this file). Nothing of the generator
// shares the bench process's event loop or, where the host has two CPUs or more, the servers' CPUs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { childCpuSeconds, cpuPlan, pinned } from './cpu-usage.js';
import type { RequestSpec } from './endpoints.js';

// `paced`: an open loop sending its requests evenly spread (timed-load.ts). autocannon's overallRate is a quota per
// connection and second, sent back to back as each second begins: 16-deep bursts, the rest of the second unseen (ADR 0037).
export type Loader = 'wrk' | 'autocannon' | 'paced';

export interface LoadOptions {
  url: string;
  requests: RequestSpec[];
  connections: number;
  durationS: number;
  /** Open loop (autocannon only): this many requests per second over all connections. */
  overallRate?: number;
  loader?: Loader;
  /** Called once the generator's load begins (after its own start-up). */
  started?: () => void;
}

export interface Measured {
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  responses: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  durationS: number;
  /** CPU microseconds the load generator's process spent on the run. */
  loaderCpuUs: number;
  /** `paced` only: the longest pause between two sends, ms (well over 2: the load child itself was held up). */
  sendGapMs?: number;
}

export const wrkPresent = (): boolean => spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;

/** The default generator: BENCH_LOADER, else wrk where installed. */
export const defaultLoader = (): Loader => (process.env.BENCH_LOADER as Loader | undefined) ?? (wrkPresent() ? 'wrk' : 'autocannon');

/** A Lua string literal (the bench's requests are ASCII). */
function lua(s: string): string {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`wrk script: non-ASCII text ${JSON.stringify(s)}`);
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * wrk's script: one request set as wrk's own (sent from its prepared buffer), or several in turn through request(); and
 * one JSON line of counts and percentiles (microseconds) when done.
 */
function wrkScript(requests: RequestSpec[]): string {
  const headers = (r: RequestSpec) => `{${Object.entries(r.headers).map(([k, v]) => `[${lua(k)}]=${lua(v)}`).join(',')}}`;
  const body = (r: RequestSpec) => (r.body === undefined ? 'nil' : lua(r.body));
  const [one] = requests;
  const send =
    requests.length === 1
      ? `wrk.method = ${lua(one.method)}\nwrk.path = ${lua(one.path)}\nwrk.headers = ${headers(one)}\nwrk.body = ${body(one)}`
      : `local reqs = {}\nlocal n = 0\nfunction init(args) reqs = {${requests.map((r) => `wrk.format(${lua(r.method)}, ${lua(r.path)}, ${headers(r)}, ${body(r)})`).join(', ')}} end\nfunction request() n = n % #reqs + 1; return reqs[n] end`;
  return `${send}
function done(s, lat, _)
  local e = s.errors
  io.write(string.format('{"responses":%d,"us":%d,"p50":%d,"p99":%d,"status":%d,"errors":%d}\\n', s.requests, s.duration,
    lat:percentile(50), lat:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
`;
}

const STARTED = 'load: started\n';

function runChild(cmd: string, args: string[], started: () => void = () => undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    if (cmd !== process.execPath && !args.includes(process.execPath)) started();
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      if (text.includes(STARTED)) started();
      if (text.replace(STARTED, '')) process.stderr.write(text.replace(STARTED, ''));
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}`))));
  });
}

async function wrk(o: LoadOptions): Promise<Omit<Measured, 'loaderCpuUs'>> {
  if (o.overallRate) throw new Error('wrk runs a closed loop only: an open loop needs BENCH_LOADER=autocannon');
  const dir = mkdtempSync(join(tmpdir(), 'vls-wrk-'));
  try {
    writeFileSync(join(dir, 'load.lua'), wrkScript(o.requests));
    const args = ['-t1', `-c${o.connections}`, `-d${Math.max(1, Math.round(o.durationS))}s`, '-s', join(dir, 'load.lua'), o.url];
    const out = await runChild(...pinned(cpuPlan().loader, 'wrk', args), o.started);
    const line = out.split('\n').find((l) => l.startsWith('{"responses"'));
    if (!line) throw new Error(`unexpected wrk output: ${out.slice(0, 300)}`);
    const r = JSON.parse(line) as { responses: number; us: number; p50: number; p99: number; status: number; errors: number };
    const durationS = r.us / 1e6;
    return { rps: (r.responses - r.status) / durationS, p50: r.p50 / 1000, p99: r.p99 / 1000, responses: r.responses, non2xx: r.status, errors: r.errors, durationS };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One run of either generator in its own pinned process; its CPU is read from our children's time when it is reaped. */
export async function runLoad(o: LoadOptions): Promise<Measured> {
  const cpu0 = childCpuSeconds();
  const { started, ...options } = o;
  const node = pinned(cpuPlan().loader, process.execPath, ['--import', 'tsx', import.meta.filename, JSON.stringify(options)]);
  const m = (o.loader ?? defaultLoader()) === 'wrk' ? await wrk(o) : (JSON.parse(await runChild(...node, started)) as Omit<Measured, 'loaderCpuUs'>);
  return { ...m, loaderCpuUs: (childCpuSeconds() - cpu0) * 1e6 };
}

/** The p-th quantile of sorted values (nearest rank). */
export const percentile = (sorted: Float64Array, p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] : NaN);

/** In the autocannon child: every 2xx response's own time (sub-millisecond, unlike autocannon's histogram). */
async function autocannonRun(o: LoadOptions): Promise<Omit<Measured, 'loaderCpuUs'>> {
  const times: number[] = [];
  let responses = 0;
  const options: autocannon.Options = {
    url: o.url,
    connections: o.connections,
    duration: o.durationS,
    timeout: 10,
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
    requests: o.requests.map((r) => ({ method: r.method as autocannon.Request['method'], path: r.path, headers: r.headers, body: r.body })),
  };
  // The callback form: its instance is an event emitter (@types/autocannon types the promise form as a bare Promise).
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(options, (err: unknown, result) => (err ? reject(err as Error) : resolve(result))).on('response', (_c, status, _b, ms) => {
      responses++;
      if (status >= 200 && status <= 299) times.push(ms);
    });
    process.stderr.write(STARTED);
  });
  const sorted = Float64Array.from(times).sort();
  const durationS = (r.finish.getTime() - r.start.getTime()) / 1000 || o.durationS;
  return { rps: sorted.length / durationS, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), responses, non2xx: r.non2xx, errors: r.errors + r.timeouts, durationS };
}

/** In the child: the `paced` open loop, after half a second unrecorded (the client's connections and JIT). */
async function pacedRun(o: LoadOptions): Promise<Omit<Measured, 'loaderCpuUs'>> {
  const { timedLoad, timedPool } = await import('./timed-load.js');
  const run = { pool: timedPool(o.url, o.connections), rate: o.overallRate, request: (i: number) => o.requests[i % o.requests.length] };
  await timedLoad({ ...run, until: 0.5 });
  process.stderr.write(STARTED);
  const { samples, elapsedS } = await timedLoad({ ...run, until: o.durationS });
  await run.pool.close();
  const sorted = Float64Array.from(samples.filter((x) => x.status >= 200 && x.status <= 299), (x) => x.ms).sort();
  const errors = samples.filter((x) => !x.status).length;
  const sentAt = Float64Array.from(samples, (x) => x.at).sort();
  let sendGapMs = 0;
  for (let i = 1; i < sentAt.length; i++) sendGapMs = Math.max(sendGapMs, sentAt[i] - sentAt[i - 1]);
  return { rps: sorted.length / elapsedS, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), responses: samples.length, non2xx: samples.length - sorted.length - errors, errors, durationS: elapsedS, sendGapMs };
}

// Not awaited at the top level: timed-load.ts imports this module, which must finish evaluating first.
const child = process.argv[1] === import.meta.filename ? (JSON.parse(process.argv[2]) as LoadOptions) : null;
if (child) void (child.loader === 'paced' ? pacedRun(child) : autocannonRun(child)).then((m) => process.stdout.write(JSON.stringify(m)));

export const round = (n: number, d = 1): number => Math.round(n * 10 ** d) / 10 ** d;

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
