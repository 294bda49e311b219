// Password strength estimation off the event loop: a piscina worker-thread pool running zxcvbn-ts.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { truncateForAnalysis, type Strength } from '../../domain/password.js';
import { Overloaded } from '../../errors.js';
import type { ZxcvbnWorkerData } from './zxcvbn-worker.js';

export interface StrengthEstimator {
  /** zxcvbn estimate of the first 128 code points of the password, computed in a worker thread. */
  estimate(password: string): Promise<Strength>;
  /** Stop the workers; pending estimates are rejected. */
  close(): Promise<void>;
}

export interface StrengthEstimatorOptions {
  /** Most worker threads; default: os.availableParallelism(). Each holds the dictionaries (~75 MB RSS, bench/memory.ts). */
  threads?: number;
  /**
   * Threads kept even when idle (started and warmed at once); default: all of them. With fewer, threads
   * start on demand (~0.3 s cold) and leave after idleTimeoutMs, so an idle server does not hold their memory.
   */
  minThreads?: number;
  /** How long an idle thread above minThreads stays; default 10 minutes. */
  idleTimeoutMs?: number;
  /** Estimates allowed to wait for a free worker before new ones get 503; default 512. */
  maxQueue?: number;
  /**
   * Nice increment for the workers (Linux); default 19, the lowest priority: zxcvbn is background CPU work and
   * the event loop must win every contention for a core (docs/adr/0003).
   */
  niceIncrement?: number;
  /** Also use the de, fr and es-es word lists (default false): they double the per-call cost. */
  extraLanguages?: boolean;
}

/** The worker next to this module: .js when compiled, .ts under vitest/tsx. */
function workerFile(): { filename: string; execArgv: string[] } {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const url = new URL(`./zxcvbn-worker${ext}`, import.meta.url);
  // TypeScript sources need the tsx loader inside the worker too; compiled JS needs nothing.
  return { filename: url.href, execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
}

/** The young generation of a zxcvbn worker thread, MB (semi-spaces and the space objects are promoted from). */
const WORKER_YOUNG_GENERATION_MB = 8;

const isQueueFull = (err: unknown): boolean => err instanceof Error && /queue is at limit/i.test(err.message);

export function createStrengthEstimator(opts: StrengthEstimatorOptions = {}): StrengthEstimator {
  const threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
  const { filename, execArgv } = workerFile();
  const pool = new Piscina<string, Strength>({
    filename,
    execArgv,
    minThreads: Math.min(threads, Math.max(0, Math.floor(opts.minThreads ?? threads))),
    maxThreads: threads,
    idleTimeout: opts.idleTimeoutMs ?? 10 * 60_000,
    maxQueue: opts.maxQueue ?? 512,
    niceIncrement: opts.niceIncrement ?? 19,
    // An estimate's garbage is short-lived and small: with V8's default on Node 24 each worker's young generation grew
    // to ~70 MB (bench/memory.ts: +143 MB RSS per thread after 300 estimates, +75 MB with this cap).
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    workerData: { extraLanguages: opts.extraLanguages ?? false } satisfies ZxcvbnWorkerData,
  });
  let closed = false;

  return {
    async estimate(password: string): Promise<Strength> {
      if (closed) throw new Overloaded('password analysis is shutting down');
      try {
        // Only the analysed prefix is posted to the worker, in memory.
        return await pool.run(truncateForAnalysis(password));
      } catch (err) {
        // Never rethrow the raw error: it carries no password, but keep client text generic anyway.
        if (isQueueFull(err)) throw new Overloaded('password analysis is busy, retry shortly');
        throw new Error('password strength worker failed');
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },
  };
}
