// One bench run's state and steps: settings, rows, service launches with warm-up, single and alternated measurements.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { endpoint, probe, requestsFor, type RequestSpec } from './endpoints.js';
import { median, merge, runLoad, warmUntilSteady, type Measured } from './measure.js';
import { runWrk } from './wrk.js';
import { createKey, PeakRss, startService, waitIdle, type Proc, type ServiceOptions } from './processes.js';
import { emptyRow, type Row } from './report.js';
import { sampleCpu, UsageTotals, type Usage } from './cpu-usage.js';

const num = (name: string, def: number): number => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0`);
  return v;
};

export const settings = {
  connections: num('BENCH_CONNECTIONS', 32),
  durationS: num('BENCH_DURATION', 5),
  warmupS: num('BENCH_WARMUP', 0.5),
  serviceWarmupMaxS: num('BENCH_SERVICE_WARMUP', 4),
  bicRate: num('BENCH_BIC_RATE', 500),
  /** Alternated comparisons: rounds of one slice per side (each side BENCH_DURATION s in all). */
  pairRounds: Math.max(1, Math.round(num('BENCH_PAIR_ROUNDS', 5))),
};

/** A BIC measurement of one service alternated with another's: the ratio the limit and worker targets use. */
export interface Pair {
  id: string;
  versus: string;
  rps: number;
  versusRps: number;
  /** Median of the rounds' ratios (x_i / y_i of adjacent slices). */
  ratio: number;
  /** Every round's ratio, in time order: the spread shows the machine's noise. */
  rounds: number[];
  /** CPU per response of each side's process tree over its slices, microseconds. */
  cpuUsPerReq: number | null;
  versusCpuUsPerReq: number | null;
  /** The load generator's CPU per response on each side, microseconds: it runs on the same cores. */
  loaderUsPerReq: number | null;
  versusLoaderUsPerReq: number | null;
  /** Host CPU steal over the whole alternation, percent. */
  stealPct: number | null;
  /** p99 of each side's 2xx answers over its slices, ms. */
  p99?: number;
  versusP99?: number;
}

export interface ServiceStart {
  name: string;
  readyAfterS: number;
  busyAfterReadyS: number;
  cpuAfterReadyS: number;
  warmupS: number;
  warmupRps: number[];
}

/** One side of an alternated measurement. */
export interface Side {
  url: string;
  requests: RequestSpec[];
  /** The process answering, for its CPU per response. */
  pid: number | null;
}

export interface Launched {
  svc: Proc;
  key: string;
  label: string;
}

export class Session {
  readonly rows: Row[] = [];
  readonly pairs: Pair[] = [];
  readonly services: ServiceStart[] = [];
  private readonly started = Date.now();
  private readonly only: Set<string> | null;

  constructor(readonly dir: string) {
    this.only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
  }

  wanted(id: string): boolean {
    return !this.only || this.only.has(id);
  }

  elapsedS(): number {
    return (Date.now() - this.started) / 1000;
  }

  log(s: string): void {
    process.stderr.write(`[bench ${this.elapsedS().toFixed(0).padStart(3)} s] ${s}\n`);
  }

  freshDir(name: string): string {
    return mkdtempSync(join(this.dir, `${name}-`));
  }

  /** Warm up, then measure with the peak RSS of `pid`'s tree; any non-2xx or error marks the row failed. */
  async measure(id: string, label: string, url: string, requests: RequestSpec[], pid: number | null, note: string[] = [], warmupS = settings.warmupS): Promise<Row> {
    const { connections, durationS } = settings;
    this.log(`${label}: warm-up ${warmupS} s, measure ${durationS} s`);
    if (warmupS > 0) {
      const w = await runLoad({ url, requests, connections, durationS: warmupS });
      if (w.non2xx + w.errors > 0) note.push(`warm-up saw ${w.non2xx} non-2xx, ${w.errors} errors`);
    }
    const rss = pid ? new PeakRss(pid) : null;
    rss?.start();
    const before = sampleCpu(pid);
    const m = await runLoad({ url, requests, connections, durationS });
    const usage = new UsageTotals(pid !== null).add(before, sampleCpu(pid), m.responses).usage();
    return this.toRow(id, label, m, rss?.stop() ?? null, note, usage);
  }

  toRow(id: string, label: string, m: Measured, peakRssMb: number | null, note: string[], usage: Usage | null = null): Row {
    const bad = m.non2xx + m.errors > 0;
    if (bad) note.unshift(`FAILED: ${m.non2xx} non-2xx ${JSON.stringify(m.statusCodes)}, ${m.errors} connection errors/timeouts`);
    return {
      ...emptyRow(id, label, bad ? 'failed' : 'ok', ''),
      ...usage,
      note: note.join('; ') || null,
      rps: m.rps,
      p50: m.p50,
      p99: m.p99,
      non2xx: m.non2xx,
      errors: m.errors,
      peakRssMb,
    };
  }

  /** A row that could not be measured (unless one with that id exists already). */
  mark(id: string, label: string, status: Row['status'], note: string): void {
    if (!this.rows.some((r) => r.id === id)) this.rows.push(emptyRow(id, label, status, note));
  }

  /**
   * Start a service with a fresh key, check BIC answers 200, wait until it is idle and warm it up (every endpoint in
   * `mixed` once, then BIC until steady). A failure marks `ids` with `onFail` and returns null.
   */
  async launch(o: ServiceOptions, label: string, ids: Array<[string, string]>, mixed: string[] = [], onFail: Row['status'] = 'failed'): Promise<Launched | null> {
    let svc: Proc | null = null;
    try {
      this.log(`starting ${o.name}`);
      const key = await createKey(o.name, o.env, o.dir);
      svc = await startService(o);
      const p = await probe(svc.url, endpoint('bic'), key);
      if (!p.ok) throw new Error(`BIC probe answered ${p.problem}`);
      const idle = await waitIdle(svc.pid, 15);
      const ok: string[] = [];
      for (const id of mixed) if ((await probe(svc.url, endpoint(id), key)).ok) ok.push(id);
      const bic = requestsFor(endpoint('bic'), key);
      const w = await warmUntilSteady(svc.url, ok.flatMap((id) => requestsFor(endpoint(id), key)), bic, settings.connections, settings.serviceWarmupMaxS);
      this.services.push({ name: o.name, readyAfterS: svc.readyAfterS, busyAfterReadyS: idle.waitedS, cpuAfterReadyS: idle.cpuS, warmupS: w.seconds, warmupRps: w.rounds });
      this.log(
        `${o.name}: /readyz after ${svc.readyAfterS.toFixed(1)} s, then ${idle.cpuS.toFixed(1)} s CPU in ${idle.waitedS.toFixed(1)} s until idle; ` +
          `warm-up ${w.seconds.toFixed(1)} s (BIC req/s per second: ${w.rounds.join(', ')})`,
      );
      return { svc, key, label };
    } catch (err) {
      await svc?.stop();
      const msg = (err as Error).message.split('\n').slice(0, 6).join(' | ');
      for (const [id, l] of ids) this.mark(id, l, onFail, `${o.name}: ${msg}`);
      return null;
    }
  }

  /** BIC on service `x` alternated with BIC on service `y`: a row of x's, with the ratio x / y in its note and in `pairs`. */
  async pair(id: string, x: Launched, y: Launched, note: string[] = [], loader: 'autocannon' | 'wrk' = 'autocannon'): Promise<void> {
    this.log(`${x.label} alternated with ${y.label}: ${settings.pairRounds} rounds of ${(settings.durationS / settings.pairRounds).toFixed(1)} s each`);
    const side = (l: Launched): Side => ({ url: l.svc.url, requests: requestsFor(endpoint('bic'), l.key), pid: l.svc.pid });
    const rss = new PeakRss(x.svc.pid);
    rss.start();
    const a = between(await this.rotate([side(x), side(y)], settings.durationS, { loader }), 0, 1);
    const { mx, my, ratio, rounds } = a;
    const p = pairOf(id, y.label, a);
    this.pairs.push(p);
    const yBad = my.non2xx + my.errors > 0 ? [`FAILED on ${y.label}: ${my.non2xx} non-2xx, ${my.errors} errors`] : [];
    const yCpu =
      (a.uy.cpuUsPerReq === null ? '' : `, ${a.uy.cpuUsPerReq.toFixed(1)} us CPU/req`) +
      (a.uy.hostBusyPct === null ? '' : `, host ${a.uy.hostBusyPct.toFixed(0)}% busy`) +
      (p.loaderUsPerReq === null || p.versusLoaderUsPerReq === null
        ? ''
        : `; ${loader} ${p.loaderUsPerReq.toFixed(1)} vs ${p.versusLoaderUsPerReq.toFixed(1)} us CPU/req`);
    const text = `alternated with ${y.label} (${Math.round(my.rps)} req/s${yCpu}): ratio ${ratio.toFixed(2)}x (median of ${rounds.map((r) => r.toFixed(2)).join(', ')})`;
    this.rows.push(this.toRow(id, x.label, mx, rss.stop(), [...yBad, text, ...note], { ...a.ux, stealPct: a.stealPct }));
    if (yBad.length) this.rows[this.rows.length - 1].status = 'failed';
  }

  /**
   * Load every side in turn, round after round, each `durationS` in all. The order reverses every other round and
   * rotates every two (two sides: x y, y x, y x, x y, ...), so no side always runs first or after the same
   * neighbour. A ratio between two sides is the median of their per-round ratios (`between`): the host's load moves
   * by 20-50% within seconds, and slices of one round see nearly the same machine, where totals over the whole run
   * would let one burst of noise decide.
   */
  async rotate(sides: Side[], durationS: number, o: { loader?: 'autocannon' | 'wrk'; warmFirst?: boolean } = {}): Promise<Rotation> {
    const { connections, pairRounds } = settings;
    const slice = durationS / pairRounds;
    const load = (s: Side, seconds: number): Promise<Measured> =>
      o.loader === 'wrk'
        ? runWrk({ url: s.url, request: s.requests[0], connections, durationS: seconds })
        : runLoad({ url: s.url, requests: s.requests, connections, durationS: seconds });
    const runs: Measured[][] = sides.map(() => []);
    const usage = sides.map((s) => new UsageTotals(s.pid !== null));
    const host = new UsageTotals(false);
    // One unrecorded slice each first where asked: an endpoint not called for the last minute of rows measured at
    // half its rate in its first slice (BIC 0.32-0.34x of Koa in round 0 against 0.59-0.66x in the others).
    if (o.warmFirst) for (const side of sides) await load(side, Math.min(slice, 0.3));
    const start = sampleCpu(null);
    for (let round = 0; round < pairRounds; round++) {
      const order = sides.map((_, i) => (i + (round >> 1)) % sides.length);
      if (round % 2) order.reverse();
      for (const i of order) {
        const before = sampleCpu(sides[i].pid);
        const m = await load(sides[i], slice);
        usage[i].add(before, sampleCpu(sides[i].pid), m.responses);
        runs[i].push(m);
      }
    }
    host.add(start, sampleCpu(null), 0);
    return { runs, usage: usage.map((u) => u.usage()), stealPct: host.usage().stealPct };
  }

  /** Two sides in turn (rotate), recorded as the pair `id` (x / y) without a row of its own. */
  async alternate(id: string, versus: string, x: Side, y: Side, durationS: number): Promise<Pair> {
    const r = await this.rotate([x, y], durationS, { warmFirst: true });
    const p = pairOf(id, versus, between(r, 0, 1));
    this.pairs.push(p);
    return p;
  }

  /**
   * Endpoints of the service and the bare Koa baseline in one rotation, for the "vs Koa" and "vs BIC" targets: no
   * rows of their own, pairs `<id>-vs-koa` and `<id>-vs-bic` (an endpoint with a failed answer is left out and logged).
   */
  async ratiosToKoaAndBic(endpoints: Record<string, Side>, koa: Side, durationS: number, peer?: Side): Promise<void> {
    const ids = Object.keys(endpoints);
    const sides = [koa, ...ids.map((id) => endpoints[id])];
    if (peer) sides.push(peer);
    const r = await this.rotate(sides, durationS, { warmFirst: true });
    const bad = (i: number) => r.runs[i].some((m) => m.non2xx + m.errors > 0);
    const bic = ids.indexOf('bic') + 1;
    // The Fastify peer (issue #48): BIC of the service against the same request to the peer, with both p99s.
    if (peer && bic > 0) {
      const p = sides.length - 1;
      if (bad(p) || bad(bic)) this.log('BIC or the Fastify peer: non-2xx answers or errors, no ratio');
      else this.pairs.push(pairOf('bic-vs-fastify-peer', 'Fastify peer', between(r, bic, p)));
    }
    if (bad(0)) return this.log('bare Koa: non-2xx answers or errors, no ratios');
    ids.forEach((id, k) => {
      const i = k + 1;
      if (bad(i)) return this.log(`${id}: non-2xx answers or errors, no ratios`);
      this.pairs.push(pairOf(`${id}-vs-koa`, 'bare Koa (baseline)', between(r, i, 0)));
      if (bic > 0 && i !== bic && !bad(bic)) this.pairs.push(pairOf(`${id}-vs-bic`, 'BIC', between(r, i, bic)));
    });
  }
}

/** Every side's slices in round order, the CPU per response of each, and the host's steal over the rotation. */
interface Rotation {
  runs: Measured[][];
  usage: Usage[];
  stealPct: number | null;
}

/** Side x against side y of a rotation, as an alternation of the two. */
function between(r: Rotation, x: number, y: number): Alternation {
  const rounds = r.runs[x].map((m, k) => m.rps / r.runs[y][k].rps);
  return { mx: merge(r.runs[x]), my: merge(r.runs[y]), ratio: median(rounds), rounds, ux: r.usage[x], uy: r.usage[y], stealPct: r.stealPct };
}

interface Alternation {
  mx: Measured;
  my: Measured;
  ratio: number;
  rounds: number[];
  ux: Usage;
  uy: Usage;
  stealPct: number | null;
}

function pairOf(id: string, versus: string, a: Alternation): Pair {
  const { mx, my, ratio, rounds } = a;
  return {
    id,
    versus,
    rps: mx.rps,
    versusRps: my.rps,
    ratio,
    rounds,
    cpuUsPerReq: a.ux.cpuUsPerReq,
    versusCpuUsPerReq: a.uy.cpuUsPerReq,
    loaderUsPerReq: perResponse(mx.loaderCpuUs, mx.responses),
    versusLoaderUsPerReq: perResponse(my.loaderCpuUs, my.responses),
    stealPct: a.stealPct,
    p99: mx.p99,
    versusP99: my.p99,
  };
}

function perResponse(us: number | null, responses: number): number | null {
  return us !== null && Number.isFinite(us) && responses > 0 ? us / responses : null;
}

