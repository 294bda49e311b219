// One load run with autocannon (as a library): requests/s, p50/p99 from every 2xx response time, non-2xx and errors.
import autocannon from 'autocannon';
import { loaderCpuSeconds } from './cpu-usage.js';
import type { RequestSpec } from './endpoints.js';

export interface LoadOptions {
  url: string;
  requests: RequestSpec[];
  connections: number;
  durationS: number;
  /** Open loop: this many requests per second over all connections (default: closed loop, as fast as answered). */
  overallRate?: number;
}

export interface Measured {
  rps: number;
  /** Milliseconds, from the 2xx responses' own timings (sub-millisecond, unlike autocannon's integer histogram). */
  p50: number;
  p99: number;
  responses: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Status code -> count, for the non-2xx ones. */
  statusCodes: Record<string, number>;
  durationS: number;
  /** Every 2xx response time, ms, sorted. */
  times: Float64Array;
  /**
   * CPU microseconds the load generator spent on the run (null: not known). It shares the host's cores with the
   * service, so its cost per response, which grows with the response's header fields and the request's body, is
   * part of every ratio measured here.
   */
  loaderCpuUs: number | null;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export async function runLoad(o: LoadOptions): Promise<Measured> {
  let times = new Float64Array(1 << 16);
  let n = 0;
  let responses = 0;
  const cpu0 = loaderCpuSeconds('self');
  const instance = autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.durationS,
    pipelining: 1,
    timeout: 10,
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
    requests: o.requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })),
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    responses++;
    if (status < 200 || status > 299) return;
    if (n === times.length) {
      const grown = new Float64Array(times.length * 2);
      grown.set(times);
      times = grown;
    }
    times[n++] = ms;
  });
  const r = await instance;
  const loaderCpuUs = (loaderCpuSeconds('self') - cpu0) * 1e6;
  const sorted = times.subarray(0, n).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) if (!code.startsWith('2')) statusCodes[code] = s.count;
  const durationS = (r.finish.getTime() - r.start.getTime()) / 1000 || o.durationS;
  return {
    rps: responses / durationS,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    responses,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    statusCodes,
    durationS,
    times: sorted,
    loaderCpuUs,
  };
}

/**
 * Several runs as one: requests/s over their summed duration, percentiles over all their response times
 * (runs without single timings, from wrk: the median of their p50s and the largest p99).
 */
/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function merge(runs: Measured[]): Measured {
  const n = runs.reduce((s, r) => s + r.times.length, 0);
  const times = new Float64Array(n);
  let at = 0;
  for (const r of runs) {
    times.set(r.times, at);
    at += r.times.length;
  }
  times.sort();
  const statusCodes: Record<string, number> = {};
  for (const r of runs) for (const [c, k] of Object.entries(r.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + k;
  const durationS = runs.reduce((s, r) => s + r.durationS, 0);
  const responses = runs.reduce((s, r) => s + r.responses, 0);
  const p50s = runs.map((r) => r.p50).sort((a, b) => a - b);
  return {
    rps: responses / durationS,
    p50: n > 0 ? percentile(times, 0.5) : p50s[p50s.length >> 1],
    p99: n > 0 ? percentile(times, 0.99) : Math.max(...runs.map((r) => r.p99)),
    responses,
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    statusCodes,
    durationS,
    times,
    loaderCpuUs: runs.every((r) => r.loaderCpuUs !== null) ? runs.reduce((s, r) => s + r.loaderCpuUs!, 0) : null,
  };
}

/** A short unmeasured run first (JIT, connection set-up, caches), then the measured one. */
export async function warmAndMeasure(o: LoadOptions, warmupS: number): Promise<{ measured: Measured; warmupNon2xx: number }> {
  const warm = warmupS > 0 ? await runLoad({ ...o, durationS: warmupS }) : null;
  const measured = await runLoad(o);
  return { measured, warmupNon2xx: warm ? warm.non2xx + warm.errors : 0 };
}

export interface Warmup {
  seconds: number;
  /** Requests/s of each 1 s round of `steady`. */
  rounds: number[];
}

/**
 * After a start: `mixed` (every endpoint) under load for 1 s (JIT, caches, worker pools), then 1 s rounds of
 * `steady` until two rounds after the first agree within 10%, for at most maxS seconds (JIT tiers settle).
 */
export async function warmUntilSteady(url: string, mixed: RequestSpec[], steady: RequestSpec[], connections: number, maxS: number): Promise<Warmup> {
  const t0 = Date.now();
  const rounds: number[] = [];
  if (maxS <= 0) return { seconds: 0, rounds };
  if (mixed.length > 0) await runLoad({ url, requests: mixed, connections, durationS: 1 });
  let prev = 0;
  while (steady.length > 0 && (Date.now() - t0) / 1000 < maxS) {
    const { rps } = await runLoad({ url, requests: steady, connections, durationS: 1 });
    rounds.push(Math.round(rps));
    if (rounds.length >= 2 && Math.abs(rps - prev) / prev < 0.1) break;
    prev = rps;
  }
  return { seconds: (Date.now() - t0) / 1000, rounds };
}
