// Password strength estimation off the event loop: a piscina worker-thread pool running zxcvbn-ts.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { truncateForAnalysis, type Strength } from '../../domain/password.js';
import { Overloaded } from '../../errors.js';
import { workerScript } from '../files/worker-script.js';
import type { SharedZxcvbnData, ZxcvbnWorkerData } from './zxcvbn-worker.js';

export interface StrengthEstimator {
  /** zxcvbn estimate of the first 128 code points of the password, computed in a worker thread. */
  estimate(password: string): Promise<Strength>;
  /** Stop the workers; pending estimates are rejected. */
  close(): Promise<void>;
}

export interface StrengthEstimatorOptions {
  /** Most worker threads; default: os.availableParallelism(). The first costs ~40 MB RSS with the shared word lists, each further one ~15 MB (bench/memory.ts). */
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
   * Nice increment for the workers (Linux); default 5: the event loop wins three quarters of a contended core,
   * and an estimate still gets the rest. At 19 a password request waited behind every other thread of the process
   * and some waited seconds when the service had one core (docs/adr/0003).
   */
  niceIncrement?: number;
  /** Also use the de, fr and es-es word lists (default false): they double the per-call cost. */
  extraLanguages?: boolean;
}

/**
 * The young generation of a zxcvbn worker thread, MB (semi-spaces and the space objects are promoted from). 4 MB held
 * ~4 MB less than 8 after 3,000 estimates at no measurable cost; 2 MB saved 2.5 MB more but slowed estimates (ADR 0034).
 */
const WORKER_YOUNG_GENERATION_MB = 4;

/**
 * The word lists built once, in a thread of their own (the event loop never sorts 240k words), into SharedArrayBuffers
 * that every pool thread then reads in place: one copy for the process instead of one per thread.
 */
function buildShared(filename: string, execArgv: string[], extraLanguages: boolean): Promise<SharedZxcvbnData> {
  return new Promise((resolve, reject) => {
    const builder = new Worker(new URL(filename), {
      execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      workerData: { buildWordTable: true, extraLanguages } satisfies ZxcvbnWorkerData,
    });
    builder.once('message', (shared: SharedZxcvbnData) => {
      resolve(shared);
      void builder.terminate();
    });
    builder.once('error', reject);
    builder.once('exit', (code) => reject(new Error(`word-list builder exited ${code}`)));
  });
}

const isQueueFull = (err: unknown): boolean => err instanceof Error && /queue is at limit/i.test(err.message);

export function createStrengthEstimator(opts: StrengthEstimatorOptions = {}): StrengthEstimator {
  const threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
  const { filename: url, execArgv } = workerScript(import.meta.url, 'zxcvbn-worker');
  const filename = url.href; // Piscina takes a string
  const extraLanguages = opts.extraLanguages ?? false;
  const minThreads = Math.min(threads, Math.max(0, Math.floor(opts.minThreads ?? threads)));
  let pool: Piscina<string, Strength> | undefined;
  const starting = (): Promise<Piscina<string, Strength>> =>
    (started ??= buildShared(filename, execArgv, extraLanguages).then(
      (shared) =>
        (pool = new Piscina<string, Strength>({
          filename,
          execArgv,
          minThreads,
          maxThreads: threads,
          idleTimeout: opts.idleTimeoutMs ?? 10 * 60_000,
          maxQueue: opts.maxQueue ?? 512,
          niceIncrement: opts.niceIncrement ?? 5,
          // An estimate's garbage is short-lived and small: with V8's default on Node 24 each worker's young generation
          // grew to ~70 MB (bench/memory.ts: +143 MB RSS per thread after 300 estimates, +75 MB with this cap).
          resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
          workerData: { extraLanguages, shared } satisfies ZxcvbnWorkerData,
        })),
      (err: unknown) => {
        started = undefined; // the next estimate tries again
        throw err;
      },
    ));
  let started: Promise<Piscina<string, Strength>> | undefined;
  // Threads kept warm start (after the lists are built) at once; otherwise on the first estimate.
  if (minThreads > 0) starting().catch(() => undefined);
  let closed = false;

  return {
    async estimate(password: string): Promise<Strength> {
      if (closed) throw new Overloaded('password analysis is shutting down');
      try {
        // Only the analysed prefix is posted to the worker, in memory.
        return await (pool ?? (await starting())).run(truncateForAnalysis(password));
      } catch (err) {
        // Never rethrow the raw error: it carries no password, but keep client text generic anyway.
        if (isQueueFull(err)) throw new Overloaded('password analysis is busy, retry shortly');
        throw new Error('password strength worker failed');
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await started?.catch(() => undefined);
      await pool?.destroy();
    },
  };
}
