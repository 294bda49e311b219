// CPU accounting of a measurement window (proc(5)): the measured process tree's CPU time per response, from
// /proc/<pid>/stat, and the host's steal time, from /proc/stat (time the hypervisor gave our vCPUs to someone else).
// Requests/s decide the targets; these two say how much of a difference is the service's own cost and how much the host.
// The host's busy share (everything but idle and iowait) says how much of the machine a side left to anyone else.
import { readFileSync } from 'node:fs';
import { cpuSeconds } from './processes.js';

export interface Usage {
  /** CPU microseconds (user + system, every thread and child) the measured process spent per response. */
  cpuUsPerReq: number | null;
  /** Share of all CPU time on the host that was stolen by the hypervisor during the window, percent. */
  stealPct: number | null;
  /** Share of all CPU time on the host that was not idle (any process, the kernel, steal), percent. */
  hostBusyPct: number | null;
}

export interface CpuSample {
  cpuS: number;
  steal: number;
  idle: number;
  total: number;
}

/** The first line of /proc/stat: user nice system idle iowait irq softirq steal ... (guest time is inside user). */
function hostTicks(): { steal: number; idle: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { steal: f[7] ?? 0, idle: (f[3] ?? 0) + (f[4] ?? 0), total: f.reduce((s, v) => s + v, 0) };
  } catch {
    return { steal: 0, idle: 0, total: 0 };
  }
}

export function sampleCpu(pid: number | null): CpuSample {
  return { cpuS: pid ? cpuSeconds(pid) : 0, ...hostTicks() };
}

/** Sums of windows: add each window's (from, to) and its response count, read the usage at the end. */
export class UsageTotals {
  private cpuS = 0;
  private steal = 0;
  private idle = 0;
  private total = 0;
  private responses = 0;

  constructor(private readonly measuresCpu: boolean) {}

  add(from: CpuSample, to: CpuSample, responses: number): this {
    this.cpuS += to.cpuS - from.cpuS;
    this.steal += to.steal - from.steal;
    this.idle += to.idle - from.idle;
    this.total += to.total - from.total;
    this.responses += responses;
    return this;
  }

  usage(): Usage {
    return {
      cpuUsPerReq: this.measuresCpu && this.responses > 0 ? (this.cpuS * 1e6) / this.responses : null,
      stealPct: this.total > 0 ? (100 * this.steal) / this.total : null,
      hostBusyPct: this.total > 0 ? (100 * (this.total - this.idle)) / this.total : null,
    };
  }
}

/**
 * CPU seconds of the load generator so far: this process (autocannon runs in it) or its reaped children (wrk, whose
 * time the kernel adds to ours when it exits: cutime and cstime in /proc/self/stat). Read before and after one run.
 */
export function loaderCpuSeconds(kind: 'self' | 'children'): number {
  if (kind === 'self') {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / 100; // cutime, cstime; USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}
