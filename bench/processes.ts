// Child processes of the bench: the baselines and the service (built dist/), readiness, API key, peak RSS from /proc.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { track } from './children.js';
import { cpuPlan, pinned } from './cpu-usage.js';
import { statFields } from '../test/support/proc-stat.js';
import { waitFor as poll } from '../test/support/wait.js';
import { closedPort as freePort } from '../test/support/tls-fixtures.js';
import { NODE_START_ENV, NODE_START_FLAGS } from '../src/heap-tuning.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every variable the built src/config.ts reads (describeSettings): none leaks from the caller's environment. */
const SERVICE_VARS = await import(new URL('../dist/src/config.js', import.meta.url).href).then(
  (m: { describeSettings: () => Array<{ env: string }> }) => [...m.describeSettings().map((s) => s.env), 'NODE_OPTIONS'],
  () => ['NODE_OPTIONS'], // not built: nothing to start either (refresh-swap.ts runs from the sources)
);

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const v of SERVICE_VARS) delete env[v];
  return { ...env, ...extra };
}

export interface Proc {
  name: string;
  /** Seconds from spawn until ready. */
  readyAfterS: number;
  pid: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;
/** A poll's giveUp: the child waited for has exited. */
const gone = (child: ChildProcess) => () => exited(child) && `the process exited (${child.exitCode ?? child.signalCode})`;

/** f(), or `fallback` where it throws: /proc files vanish when their process ends, a log may not exist yet. */
export function orElse<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}

const logTail = (file: string): string => orElse(() => readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n'), '');

async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

/** Poll `url` until it answers 200 (or the child exits, or the deadline passes). */
async function waitFor(url: string, child: ChildProcess, logFile: string, ready?: ServiceOptions['ready']): Promise<void> {
  const ok = async () => {
    const res = await fetch(url, { headers: ready?.headers, signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  };
  await poll(ok, { timeoutMs: 60_000, intervalMs: ready?.intervalMs ?? 100, what: `200 from ${url}`, giveUp: gone(child) }).catch(async (err: Error) => {
    await stopChild(child);
    throw new Error(`${err.message}:\n${logTail(logFile)}`);
  });
}

/** The built keys CLI (dist/src/cli/keys.js) with `env` (the store the service will use); its stdout. */
export const keysCli = async (env: Record<string, string>, ...args: string[]): Promise<string> =>
  (await promisify(execFile)(process.execPath, [join(ROOT, 'dist/src/cli/keys.js'), ...args], { cwd: ROOT, env: cleanEnv(env) })).stdout;

/** `keys create --json` with limits of 10^9 against the store the service will use; returns the key. */
export async function createKey(env: Record<string, string>): Promise<string> {
  const limit = '1000000000';
  const out = await keysCli(env, 'create', '--name', 'bench', '--per-minute', limit, '--per-day', limit, '--per-month', limit, '--json');
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { key: string }).key;
}

/** A key made in the store the service will use (createKey), then the service (startService). */
export const startWithKey = async (o: ServiceOptions): Promise<Proc & { key: string }> => ({ key: await createKey(o.env), ...(await startService(o)) });

export interface ServiceOptions {
  name: string;
  env: Record<string, string>;
  dir: string;
  /** Node flags (default: NODE_START_FLAGS for this checkout's service, none for a script or another build). */
  nodeArgs?: string[];
  /** Processes that must exist (primary + workers) before the service counts as ready. */
  processes?: number;
  /** A bench script to run (through tsx) instead of dist/src/main.js: a baseline, the peer, the stock router. */
  script?: string;
  /** Another build's entry (the dist/src/main.js of another checkout) instead of this one's. */
  main?: string;
  /** Ready when this path answers 200 (default /readyz), polled every intervalMs (100). */
  ready?: { path: string; headers?: Record<string, string>; intervalMs?: number };
  /** The variable naming the port it listens on (default PORT; a job worker: METRICS_PORT). */
  portVar?: string;
}

/**
 * The service on a free port with its env, on the servers' CPUs (cpu-usage.ts, cpuPlan), logging to a file in `dir`;
 * ready when /readyz (or `ready.path`) answers 200 and all workers run.
 */
export async function startService(o: ServiceOptions): Promise<Proc> {
  const port = await freePort();
  const env = cleanEnv({ ...(o.script || o.main ? {} : NODE_START_ENV), ...o.env, [o.portVar ?? 'PORT']: String(port), HOST: '127.0.0.1' });
  const entry = o.script ? ['--import', 'tsx', join(ROOT, 'bench', o.script)] : [o.main ?? join(ROOT, 'dist/src/main.js')];
  const t0 = Date.now();
  const logFile = join(o.dir, `${o.name.replace(/[^a-z0-9]+/gi, '-')}.log`);
  const fd = openSync(logFile, 'a');
  // This checkout's service starts as `npm start` does (its V8 flags and malloc env, src/heap-tuning.ts) unless told otherwise.
  const flags = o.nodeArgs ?? (o.script || o.main ? [] : NODE_START_FLAGS);
  const [cmd, argv] = pinned(cpuPlan().server, process.execPath, [...flags, ...entry]);
  const child = track(spawn(cmd, argv, { cwd: ROOT, env, stdio: ['ignore', fd, fd] }));
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}${o.ready?.path ?? '/readyz'}`, child, logFile, o.ready);
  const allRunning = () => processTree(child.pid!).length >= (o.processes ?? 1);
  await poll(allRunning, { timeoutMs: 30_000, intervalMs: 100, what: `${o.name}'s ${o.processes} processes`, giveUp: gone(child) });
  if ((o.processes ?? 1) > 1) await waitFor(`${url}/readyz`, child, logFile);
  return { name: o.name, readyAfterS: (Date.now() - t0) / 1000, pid: child.pid!, url, child, stop: () => stopChild(child, 15_000) };
}

/** The program a process runs: Node 24 names its main thread "MainThread", so /proc/PID/comm no longer says node. */
const program = (pid: number): string => orElse(() => basename(readlinkSync(`/proc/${pid}/exe`)), '');

/** CPU seconds in a /proc stat file: utime + stime (at 13: the reaped children's cutime + cstime); 0 once ended. */
export function statCpuSeconds(path: string, at = 11): number {
  const f = statFields(path);
  return f ? (Number(f[at]) + Number(f[at + 1])) / 100 : 0; // USER_HZ is 100 on Linux
}

/** A number field of /proc/PID/status (VmRSS, VmHWM in kB; Threads); 0 once the process ended. */
export function statusField(pid: number, field: string): number {
  const status = orElse(() => readFileSync(`/proc/${pid}/status`, 'utf8'), '');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
}

/** pid and its descendant node processes (cluster workers; not tsx's esbuild helper), from /proc/PID/stat. */
export function processTree(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const f = /^\d+$/.test(entry) ? statFields(`/proc/${entry}/stat`) : null;
    if (f) parent.set(Number(entry), Number(f[1]));
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out.filter((p) => existsSync(`/proc/${p}`) && (p === pid || program(p) === 'node'));
}

/**
 * Peak resident memory of a process tree during a window: the kernel's high-water mark (VmHWM), reset at the start
 * through /proc/PID/clear_refs ("5", proc(5)) and summed over the tree; null where that reset is not allowed.
 */
export class PeakRss {
  private tree: number[] = [];
  private reset = true;

  constructor(private readonly pid: number) {}

  start(): void {
    this.tree = processTree(this.pid);
    for (const p of this.tree) this.reset &&= orElse(() => (writeFileSync(`/proc/${p}/clear_refs`, '5'), true), false);
  }

  /** Peak in MB since start(). */
  stop(): number | null {
    return this.reset ? Math.round(this.tree.reduce((sum, p) => sum + statusField(p, 'VmHWM'), 0) / 102.4) / 10 : null;
  }
}

/** Resident memory of one process (not its tree), MB. */
export const rssMb = (pid: number): number => statusField(pid, 'VmRSS') / 1024;

/** One scrape of the service's /metrics: its text and a reader of a sample's value (the first one, whatever labels). */
export async function scrapeMetrics(url: string): Promise<{ text: string; metric(name: string): number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return { text, metric: (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) };
}

/** CPU seconds (user + system, all threads) used so far by a process tree. */
export const cpuSeconds = (pid: number): number => processTree(pid).reduce((sum, p) => sum + statCpuSeconds(`/proc/${p}/stat`), 0);

/**
 * Wait until the process tree is idle (under 10% of one core over 250 ms), at most maxS seconds: a service may
 * answer /readyz while worker threads still build their data. Returns the seconds waited.
 */
export async function waitIdle(pid: number, maxS: number): Promise<number> {
  const t0 = Date.now();
  let last = cpuSeconds(pid);
  while ((Date.now() - t0) / 1000 < maxS) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuSeconds(pid);
    if (now - last < 0.025) break;
    last = now;
  }
  return (Date.now() - t0) / 1000;
}
