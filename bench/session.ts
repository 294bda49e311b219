// One bench run's state and steps: settings, rows, service launches with warm-up, single rows and rotations.
import { endpoint, probe, requestsFor, type RequestSpec } from './endpoints.js';
import { defaultLoader, median, runLoad, type Loader, type Measured } from './load.js';
import { createKey, PeakRss, startService, waitIdle, type Proc, type ServiceOptions } from './processes.js';
import { emptyRow, type Row } from './report.js';
import { openWindow, type Window } from './cpu-usage.js';

/** A bench setting from the environment: a number >= 0, else `def`. */
export const num = (name: string, def: number): number => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0`);
  return v;
};

const started = Date.now();
/** Seconds since the bench began. */
export const elapsedS = (): number => (Date.now() - started) / 1000;
/** A progress line on stderr, stamped with the seconds since the bench began. */
export const log = (s: string): void => void process.stderr.write(`[bench ${elapsedS().toFixed(0).padStart(3)} s] ${s}\n`);

export const settings = {
  connections: num('BENCH_CONNECTIONS', 32),
  /** Seconds measured per slice (one side in one round) and per single row. */
  durationS: num('BENCH_DURATION', 5),
  /** Seconds of load before every slice, on the slice's own connections, discarded. */
  warmupS: num('BENCH_WARMUP', 2),
  serviceWarmupMaxS: num('BENCH_SERVICE_WARMUP', 8),
  bicRate: num('BENCH_BIC_RATE', 500),
  rounds: Math.max(1, Math.round(num('BENCH_ROUNDS', 5))),
};

/** One server answering one request list: a side of a rotation. */
export interface Side {
  id: string;
  label: string;
  url: string;
  requests: RequestSpec[];
  pid: number;
}

/** One side's measured window in one round (and the host's steal, busy share and load over it). */
export interface Slice extends Measured, Omit<Window, 'cpuS'> {
  /** The side's process tree (every thread), and the load generator, per 2xx answer, microseconds. */
  cpuUsPerReq: number;
  loaderUsPerReq: number;
  /** The generator's CPU over the window, percent of one CPU: near 100 it, not the server, set the pace. */
  loaderBusyPct: number;
  /** The server's CPU over the window, percent of one CPU: well under its CPUs, something else held them. */
  serverBusyPct: number;
  /** CPU seconds the other sides used during the window: near 0, or they were still busy with their own load. */
  othersCpuS: number;
}

export interface Rotation {
  name: string;
  loader: Loader;
  sides: Side[];
  /** slices[side][round]. */
  slices: Slice[][];
}

/** A started and warmed server, its key and its label: launch's result. */
export type Launched = NonNullable<Awaited<ReturnType<Session['launch']>>>;

/** The median of x's per-round req/s over y's (both measured in the same round, seconds apart), and of CPU per answer. */
export function ratioOf(r: Rotation, x: string, y: string): { ratio: number; rounds: number[]; cpu: number } | null {
  const i = r.sides.findIndex((s) => s.id === x);
  const k = r.sides.findIndex((s) => s.id === y);
  if (i < 0 || k < 0) return null;
  const rounds = r.slices[i].map((s, n) => s.rps / r.slices[k][n].rps);
  const cpu = r.slices[i].map((s, n) => s.cpuUsPerReq / r.slices[k][n].cpuUsPerReq);
  return { ratio: median(rounds), rounds, cpu: median(cpu) };
}

export class Session {
  readonly rows: Row[] = [];
  readonly rotations: Rotation[] = [];
  private readonly only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;

  wanted(id: string): boolean {
    return !this.only || this.only.has(id);
  }

  /** A row that could not be measured (unless one with that id exists already). */
  mark(id: string, label: string, status: Row['status'], note: string): void {
    if (!this.rows.some((r) => r.id === id)) this.rows.push(emptyRow(id, label, status, note));
  }

  /** One side alone: warm-up discarded, then one window with the peak RSS of its tree; a rotation of one round. */
  async measure(side: Side, note: string[] = []): Promise<Row> {
    const rss = new PeakRss(side.pid);
    const r = await this.rotate(side.id, [side], { rounds: 1, onWindow: () => rss.start() });
    return toRow(side, r.slices[0], rss.stop(), note);
  }

  /**
   * Every side in turn, `rounds` times (the order rotates each round and reverses every other one, so no side always
   * runs first or after the same neighbour). Before each slice the other sides must be idle (their deferred work, GC
   * or log flushes, would be charged to this one), then `warmupS` of load on fresh connections is discarded and
   * `durationS` measured: long windows of steady load, not the switching between them.
   */
  async rotate(name: string, sides: Side[], o: { rounds?: number; loader?: Loader; onWindow?: () => void } = {}): Promise<Rotation> {
    const { connections, durationS, warmupS } = settings;
    const rounds = o.rounds ?? settings.rounds;
    const loader = o.loader ?? defaultLoader();
    const slices: Slice[][] = sides.map(() => []);
    const pids = sides.map((s) => s.pid);
    for (let round = 0; round < rounds; round++) {
      const order = sides.map((_, i) => (i + round) % sides.length);
      if (round % 2) order.reverse();
      for (const i of order) {
        const s = sides[i];
        const idle = await Promise.all(pids.filter((p) => p !== s.pid).map((p) => waitIdle(p, 10)));
        const load = (d: number) => runLoad({ url: s.url, requests: s.requests, connections, durationS: d, loader });
        if (warmupS > 0) await load(warmupS);
        o.onWindow?.();
        const w = openWindow(pids);
        const m = await load(durationS);
        const { cpuS, ...host } = w.end();
        const own = pids.indexOf(s.pid);
        const ok = Math.max(1, m.responses - m.non2xx);
        const others = cpuS.reduce((sum, c, k) => sum + (k === own || pids[k] === s.pid ? 0 : c), 0);
        slices[i].push({ ...m, ...host, cpuUsPerReq: (cpuS[own] * 1e6) / ok, loaderUsPerReq: m.loaderCpuUs / ok, loaderBusyPct: m.loaderCpuUs / (m.durationS * 1e4), serverBusyPct: (100 * cpuS[own]) / m.durationS, othersCpuS: others });
        const sl = slices[i][slices[i].length - 1];
        log(
          `${name} ${loader} round ${round + 1}/${rounds} ${s.label}: ${Math.round(sl.rps)} req/s, p99 ${sl.p99.toFixed(2)} ms, ` +
            `CPU ${sl.cpuUsPerReq.toFixed(1)} us/req (${sl.serverBusyPct.toFixed(0)}% of a CPU), ${loader} ${sl.loaderUsPerReq.toFixed(1)} us/req (${sl.loaderBusyPct.toFixed(0)}% of a CPU); the others idle after ${Math.max(0, ...idle).toFixed(1)} s, ${others.toFixed(2)} s CPU in the window; ` +
            `steal ${sl.stealPct.toFixed(1)}%, host busy ${sl.busyPct.toFixed(0)}%, load ${sl.load1.toFixed(2)}`,
        );
      }
    }
    const r = { name, loader, sides, slices };
    this.rotations.push(r);
    return r;
  }

  /**
   * Start a server with a fresh key (or its own `key`: a baseline, the peer), check BIC answers 200, wait until it is
   * idle and warm it up (every endpoint in `mixed`, then BIC until steady). A failure marks `ids` failed, returns null.
   */
  async launch(o: ServiceOptions, label: string, ids: Array<[string, string]>, w: { key?: string; mixed?: string[] } = {}) {
    let svc: Proc | null = null;
    try {
      log(`starting ${o.name}`);
      const key = w.key ?? (await createKey(o.env));
      svc = await startService(o);
      const p = await probe(svc.url, endpoint('bic'), key);
      if (!p.ok) throw new Error(`BIC probe answered ${p.problem}`);
      await waitIdle(svc.pid, 15);
      const ok: string[] = [];
      for (const id of w.mixed ?? []) if ((await probe(svc.url, endpoint(id), key)).ok) ok.push(id);
      await this.warm(svc, [...ok.flatMap((id) => requestsFor(endpoint(id), key)), ...requestsFor(endpoint('bic'), key)]);
      return { svc, key, label };
    } catch (err) {
      await svc?.stop();
      const msg = (err as Error).message.split('\n').slice(0, 6).join(' | ');
      for (const [id, l] of ids) this.mark(id, l, 'failed', `${o.name}: ${msg}`);
      return null;
    }
  }

  /** After a start: load until two 1 s rounds agree within 10% (JIT tiers, caches, pools), at most serviceWarmupMaxS. */
  async warm(svc: { url: string; name: string }, requests: RequestSpec[]): Promise<void> {
    const rps: number[] = [];
    const t0 = Date.now();
    while ((Date.now() - t0) / 1000 < settings.serviceWarmupMaxS) {
      rps.push(Math.round((await runLoad({ url: svc.url, requests, connections: settings.connections, durationS: 1 })).rps));
      if (rps.length >= 3 && Math.abs(rps.at(-1)! - rps.at(-2)!) / rps.at(-2)! < 0.1) break;
    }
    log(`${svc.name}: warm-up ${((Date.now() - t0) / 1000).toFixed(1)} s (req/s per second: ${rps.join(', ')})`);
  }

  /** BIC on service x and on service y in a rotation: a row of x's with the ratio x / y in its note. */
  async pair(id: string, x: Launched, y: Launched, note: string[] = []): Promise<void> {
    const side = (sid: string, l: Launched): Side => ({ id: sid, label: l.label, url: l.svc.url, requests: requestsFor(endpoint('bic'), l.key), pid: l.svc.pid });
    const r = await this.rotate(id, [side(id, x), side(`${id}:versus`, y)]);
    const { ratio, rounds } = ratioOf(r, id, `${id}:versus`)!;
    const vs = toRow(r.sides[1], r.slices[1], null, []);
    const text = `in turn with ${y.label} (${Math.round(vs.rps ?? 0)} req/s, ${vs.cpuUsPerReq?.toFixed(1)} us CPU/req): ${ratio.toFixed(2)}x (${rounds.map((v) => v.toFixed(2)).join(', ')})`;
    const row = toRow(r.sides[0], r.slices[0], null, [text, ...note]);
    if (vs.status === 'failed') row.status = 'failed';
    this.rows.push(row);
  }
}

/** A side's row from its slices: medians over the rounds. */
export function toRow(side: Side, slices: Slice[], peakRssMb: number | null, note: string[]): Row {
  const m = (f: (s: Slice) => number) => median(slices.map(f));
  const non2xx = slices.reduce((s, x) => s + x.non2xx, 0);
  const errors = slices.reduce((s, x) => s + x.errors, 0);
  if (non2xx + errors > 0) note.unshift(`FAILED: ${non2xx} non-2xx, ${errors} connection errors/timeouts`);
  return {
    ...emptyRow(side.id, side.label, non2xx + errors > 0 ? 'failed' : 'ok', note.join('; ') || null),
    rps: m((s) => s.rps),
    p50: m((s) => s.p50),
    p99: m((s) => s.p99),
    non2xx,
    errors,
    peakRssMb,
    cpuUsPerReq: m((s) => s.cpuUsPerReq),
    loaderUsPerReq: m((s) => s.loaderUsPerReq),
    stealPct: m((s) => s.stealPct),
  };
}
