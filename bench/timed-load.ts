// Load from the bench process itself that keeps every request's own time (undici Pool): for benches that slice a run
// into phases or by request kind (soak, keys-scale, jobs), where load.ts's child reports only a whole run's percentiles.
import { Pool } from 'undici';
import type { RequestSpec } from './endpoints.js';
import { percentile, round } from './load.js';
import { waitFor as poll } from '../test/support/wait.js';

/** One request: when it was sent (performance.now()), its time to the last byte (ms), its status (0: no answer). */
export interface Timed {
  at: number;
  ms: number;
  status: number;
  label: string;
}

export type TimedRequest = RequestSpec & { label?: string };

export interface TimedLoad {
  pool: Pool;
  /** The i-th request sent. */
  request(i: number): TimedRequest;
  /** Open loop: this many requests per second spread evenly, each sent when due whether or not earlier ones answered. */
  rate?: number;
  /** Closed loop: this many requests in flight, each sent when the previous one answered. */
  connections?: number;
  /** Seconds, or until the promise settles (closed loop only). */
  until: number | Promise<unknown>;
  /** Where the samples go (a caller slicing a run by time passes its own). */
  samples?: Timed[];
}

/** A pool of keep-alive connections to `url` (requests time out after 10 s, counted as status 0). */
export const timedPool = (url: string, connections: number): Pool => new Pool(url, { connections, headersTimeout: 10_000, bodyTimeout: 10_000 });

/** One request through `pool`, its sample added to `samples`; resolves with its status. */
export async function send(pool: Pool, r: TimedRequest, samples: Timed[]): Promise<number> {
  const at = performance.now();
  const status = await pool.request({ method: r.method as 'GET', path: r.path, headers: r.headers, body: r.body }).then(
    async (res) => (await res.body.dump(), res.statusCode),
    () => 0,
  );
  samples.push({ at, ms: performance.now() - at, status, label: r.label ?? '' });
  return status;
}

/** Runs the load; resolves with its samples and the seconds from the first send to the last answer. */
export async function timedLoad(o: TimedLoad): Promise<{ samples: Timed[]; elapsedS: number }> {
  const samples = o.samples ?? [];
  const t0 = performance.now();
  let i = 0;
  if (o.rate) {
    if (typeof o.until !== 'number') throw new Error('an open loop runs for a number of seconds');
    const total = Math.round(o.rate * o.until);
    const pending: Array<Promise<number>> = [];
    while (i < total) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * o.rate) + 1);
      while (i < due) pending.push(send(o.pool, o.request(i++), samples));
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(pending);
  } else {
    const over = typeof o.until === 'number' ? () => performance.now() >= t0 + (o.until as number) * 1000 : settled(o.until);
    const loop = async () => {
      while (!over()) await send(o.pool, o.request(i++), samples);
    };
    await Promise.all(Array.from({ length: o.connections ?? 1 }, loop));
  }
  return { samples, elapsedS: (samples.reduce((end, s) => Math.max(end, s.at + s.ms), t0) - t0) / 1000 };
}

/** Counts by status and the latency figures (ms) of the samples. */
export function summarise(samples: Timed[]) {
  const sorted = Float64Array.from(samples, (s) => s.ms).sort();
  const statuses: Record<string, number> = {};
  for (const s of samples) statuses[s.status || 'error'] = (statuses[s.status || 'error'] ?? 0) + 1;
  return { n: samples.length, statuses, p50: round(percentile(sorted, 0.5), 2), p99: round(percentile(sorted, 0.99), 2), max: round(sorted.at(-1) ?? NaN) };
}

/** Milliseconds until `check` holds (polled every `everyMs`), Infinity past 10 s. */
export async function msUntil(check: () => Promise<boolean>, everyMs = 5): Promise<number> {
  const t0 = performance.now();
  return poll(check, { timeoutMs: 10_000, intervalMs: everyMs }).then(() => round(performance.now() - t0), () => Infinity);
}

/** Whether `p` has settled, asked at any time. */
export function settled(p: Promise<unknown>): () => boolean {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  return () => done;
}
