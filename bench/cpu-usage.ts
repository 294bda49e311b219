// Where the bench's processes run and what they cost (proc(5), sched_setaffinity(2)): the CPUs of the servers and of
// the load generator, a process tree's CPU time, the host's steal and load over a window.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { cpuSeconds, statCpuSeconds } from './processes.js';

export interface CpuPlan {
  /** taskset CPU lists; null: not pinned (one CPU, BENCH_PIN=0 or no taskset). */
  server: string | null;
  loader: string | null;
}

let plan: CpuPlan | undefined;

/**
 * The servers on the first half of the CPUs, the load generator (and this process) on the rest: on two CPUs, the server
 * on CPU 0 and wrk on CPU 1, so the generator's cost never lands on a server's core. BENCH_SERVER_CPUS and
 * BENCH_LOADER_CPUS override; BENCH_PIN=0 turns pinning off.
 */
export function cpuPlan(): CpuPlan {
  if (plan) return plan;
  const n = cpus().length;
  const taskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).error === undefined;
  if (process.env.BENCH_PIN === '0' || !taskset || n < 2) return (plan = { server: null, loader: null });
  const half = n >> 1;
  const list = (from: number, to: number) => (from === to ? String(from) : `${from}-${to}`);
  plan = { server: process.env.BENCH_SERVER_CPUS ?? list(0, half - 1), loader: process.env.BENCH_LOADER_CPUS ?? list(half, n - 1) };
  spawnSync('taskset', ['-a', '-p', '-c', plan.loader!, String(process.pid)], { stdio: 'ignore' });
  return plan;
}

/** A command line run on `cpus` (through taskset, which execs it: the pid is the program's). */
export function pinned(cpuList: string | null, cmd: string, args: string[]): [string, string[]] {
  return cpuList ? ['taskset', ['-c', cpuList, cmd, ...args]] : [cmd, args];
}

/** CPU seconds of this process's reaped children (cutime + cstime): a load generator's, read around its run. */
export const childCpuSeconds = (): number => statCpuSeconds('/proc/self/stat', 13);

/** The first line of /proc/stat: user nice system idle iowait irq softirq steal (guest time is inside user). */
function hostTicks(): { steal: number; idle: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
  return { steal: f[7] ?? 0, idle: (f[3] ?? 0) + (f[4] ?? 0), total: f.reduce((s, v) => s + v, 0) };
}

export interface Window {
  /** CPU seconds of each watched process tree over the window. */
  cpuS: number[];
  /** Host CPU stolen by the hypervisor, and not idle (anyone), percent of all CPU time. */
  stealPct: number;
  busyPct: number;
  /** The 1-minute load average at the window's end. */
  load1: number;
}

/** Start a window over some process trees; `end()` reads what each used and what the host did meanwhile. */
export function openWindow(pids: number[]): { end(): Window } {
  const c0 = pids.map(cpuSeconds);
  const h0 = hostTicks();
  return {
    end(): Window {
      const h1 = hostTicks();
      const total = h1.total - h0.total || 1;
      return {
        cpuS: pids.map((p, i) => cpuSeconds(p) - c0[i]),
        stealPct: (100 * (h1.steal - h0.steal)) / total,
        busyPct: (100 * (total - (h1.idle - h0.idle))) / total,
        load1: loadavg()[0],
      };
    },
  };
}

/** The host now, for a log line: CPUs, load averages, the plan. */
export function hostLine(): string {
  const p = cpuPlan();
  const pin = p.server ? `servers on CPU ${p.server}, load generator on CPU ${p.loader}` : 'not pinned';
  return `${cpus().length} CPU, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, ${pin}`;
}
