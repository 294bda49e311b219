// The service (src/main.ts) and the keys CLI (src/cli/keys.ts) as child processes, run from the sources with tsx: for
// tests whose subject is the process itself (start-up, exit codes, signals, output streams, RSS, WORKERS). Everything
// else drives the app in this process (harness.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * How long a child may take to start or to finish: a hang guard, not an expectation. tsx compiles the sources at each
 * start, which on a 2-core machine at load average 10 takes tens of seconds instead of one or two.
 */
export const PROCESS_DEADLINE_MS = 120_000;

/** Variables for the child on top of this process's environment; `undefined` removes one. */
export type ChildEnv = Record<string, string | undefined>;

/**
 * The environment a child starts from: this process's, then loopback-only upstreams (nothing leaves the machine), one
 * password thread, warnings only, a DATA_DIR of its own; then `env`.
 */
function childEnv(dataDir: string | undefined, env: ChildEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ...(dataDir === undefined ? {} : { DATA_DIR: dataDir }),
    DNS_SERVERS: '127.0.0.1:9',
    PWNED_PASSWORDS_URL: 'http://127.0.0.1:9',
    PASSWORD_THREADS: '1',
    LOG_LEVEL: 'warn',
  };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

export interface ProcessOptions {
  env?: ChildEnv;
  /** DATA_DIR, kept afterwards; without it a fresh temporary directory, removed once the process has exited. */
  dataDir?: string;
  /** Node flags before the entry point, e.g. the shipped start commands' NODE_START_FLAGS. */
  nodeArgs?: readonly string[];
}

export interface ServerProcess {
  child: ChildProcess;
  /** The address from its "listening on" line, e.g. http://127.0.0.1:40123. */
  url: string;
  port: number;
  dataDir: string;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr in the order they came. */
  output(): string;
  /** The exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resident set size from /proc/<pid>/status, in bytes. */
  rss(): number;
  /** `signal` (SIGTERM) unless it has exited already; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

interface Spawned {
  child: ChildProcess;
  dataDir: string;
  stdout(): string;
  stderr(): string;
  output(): string;
  exited: Promise<number | null>;
  hasExited(): boolean;
}

function spawnService(opts: ProcessOptions, entry = 'src/main.ts'): Spawned {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'vls-process-'));
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', entry], { cwd: ROOT, env: childEnv(dataDir, opts.env ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let both = '';
  child.stdout!.on('data', (d) => ((out += d), (both += d)));
  child.stderr!.on('data', (d) => ((err += d), (both += d)));
  // 'close', not 'exit': the output is complete once the process is gone.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  if (!opts.dataDir) void exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    child,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    output: () => both,
    exited,
    hasExited: () => child.exitCode !== null || child.signalCode !== null,
  };
}

export function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** The line src/main.ts prints once it serves (last of the start-up); WORKERS=N adds "with N workers". */
const LISTENING = /^listening on (http:\/\/\S+)/m;

/**
 * Starts the service and resolves once it prints its "listening on" line (or `ready`, whose first group is the
 * address); rejects with its output when it exits first or the deadline passes (and kills it then).
 */
export async function startServerProcess(opts: ProcessOptions & { ready?: RegExp } = {}): Promise<ServerProcess> {
  const p = spawnService(opts);
  const ready = opts.ready ?? LISTENING;
  let match: RegExpExecArray;
  try {
    match = await waitFor(() => ready.exec(p.stdout()), {
      timeoutMs: PROCESS_DEADLINE_MS,
      intervalMs: 20,
      what: 'the server listening',
      giveUp: () => p.hasExited() && `the server exited (${p.child.exitCode ?? p.child.signalCode})`,
    });
  } catch (err) {
    if (!p.hasExited()) p.child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${p.output()}`);
  }
  const url = match[1];
  return {
    ...p,
    url,
    port: Number(new URL(url).port),
    rss: () => rssOf(p.child.pid!),
    stop: async (signal = 'SIGTERM') => {
      if (!p.hasExited()) p.child.kill(signal);
      return p.exited;
    },
  };
}

/** `npm run job-worker` without npm (src/job-worker.ts), resolved once it logs that it works; killed on its deadline. */
export async function startJobWorkerProcess(opts: ProcessOptions = {}): Promise<Spawned & { stop(signal?: NodeJS.Signals): Promise<number | null> }> {
  const p = spawnService({ ...opts, env: { LOG_LEVEL: 'info', ...opts.env } }, 'src/job-worker.ts');
  try {
    await waitFor(() => p.stdout().includes('job worker started'), {
      timeoutMs: PROCESS_DEADLINE_MS,
      intervalMs: 20,
      what: 'the job worker',
      giveUp: () => p.hasExited() && `the job worker exited (${p.child.exitCode ?? p.child.signalCode})`,
    });
  } catch (err) {
    if (!p.hasExited()) p.child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${p.output()}`);
  }
  return {
    ...p,
    stop: async (signal = 'SIGTERM') => {
      if (!p.hasExited()) p.child.kill(signal);
      return p.exited;
    },
  };
}

export interface Finished {
  /** The exit code; null when a signal ended it. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the service until it exits by itself (a boot that must fail). One that starts listening instead is stopped
 * (SIGTERM, exit 0, which the test then sees); one still running at the deadline is killed (code null).
 */
export async function runServerProcess(opts: ProcessOptions = {}): Promise<Finished> {
  const p = spawnService(opts);
  p.child.stdout!.on('data', () => {
    if (LISTENING.test(p.stdout())) p.child.kill('SIGTERM');
  });
  const timer = setTimeout(() => p.child.kill('SIGKILL'), PROCESS_DEADLINE_MS);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** `npm run keys -- <args>` without npm: the keys CLI on `dataDir` (or the env's REDIS_URL); never rejects. */
export function runKeysCli(args: string[], opts: ProcessOptions = {}): Promise<Finished> {
  const env = childEnv(opts.dataDir, opts.env ?? {});
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/keys.ts', ...args],
      { cwd: ROOT, env, timeout: PROCESS_DEADLINE_MS, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number((err as NodeJS.ErrnoException).code) : null) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}
