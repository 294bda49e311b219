// The embedded job store off the event loop (docs/adr/0044): its writes (better-sqlite3 is synchronous; a commit can
// checkpoint and fsync) run in a worker thread (sqlite-job-thread.ts), started when there is work; short reads stay here.
import { Worker } from 'node:worker_threads';
import { workerScript } from '../files/worker-script.js';
import { JobStoreUnavailable, type JobStore } from './job-store.js';
import { createSqliteJobStore, type DueChecks } from './sqlite-job-store.js';

export interface ThreadData {
  dataDir: string;
}
/** The thread's operations: the store's writes, and the gauges' counts (a scan of every queued item). */
export type StoreOp = 'create' | 'cancel' | 'claim' | 'renew' | 'settle' | 'dueWebhooks' | 'webhookTried' | 'purgeExpired' | 'stats' | 'close';
export interface StoreCall {
  id: number;
  op: StoreOp;
  args: unknown[];
}
/** A call's answer; id 0 answers the start (the database opened, or why not). */
export interface StoreReply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { name: string; message: string; retryAfterSeconds?: number };
}

/** The thread's young generation, MB: a call's garbage is a batch's results or a chunk of a job (as the zxcvbn pool's). */
const THREAD_YOUNG_GENERATION_MB = 4;

/** The error as thrown in the thread; JobStoreUnavailable keeps its class (the API answers it 503). */
function revived(e: NonNullable<StoreReply['error']>): Error {
  if (e.name === 'JobStoreUnavailable') return new JobStoreUnavailable(e.message, e.retryAfterSeconds);
  return Object.assign(new Error(e.message), { name: e.name });
}

/** One running thread: its calls by id; every call waiting when it stops is refused as the store being unavailable. */
function startThread(dataDir: string, onStop: () => void, started?: (worker: Worker) => void) {
  const { filename, execArgv } = workerScript(import.meta.url, 'sqlite-job-thread');
  const worker = new Worker(filename, { execArgv, workerData: { dataDir } satisfies ThreadData, resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB } });
  started?.(worker);
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  // The thread keeps the process alive only while a call (or the start) waits on it.
  const refWhileWaiting = () => (waiting.size > 0 ? worker.ref() : worker.unref());
  let gone: string | null = null;
  const stopped = (why: string) => {
    gone ??= why;
    onStop();
    for (const w of waiting.values()) w.reject(new JobStoreUnavailable(`the job store's thread stopped (${why})`));
    waiting.clear();
  };
  const ready = new Promise<void>((resolve, reject) => waiting.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (m: StoreReply) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    refWhileWaiting();
    if (m.ok) w?.resolve(m.value);
    else w?.reject(m.id === 0 ? new JobStoreUnavailable(`the job store's thread cannot open it: ${m.error!.message}`) : revived(m.error!));
  });
  worker.on('error', (err) => stopped(err.message));
  worker.on('exit', (code) => stopped(`exit ${code}`));
  return {
    ready,
    call(op: StoreOp, args: unknown[]): Promise<unknown> {
      if (gone !== null) return Promise.reject(new JobStoreUnavailable(`the job store's thread stopped (${gone})`));
      const id = nextId++;
      const answer = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
      refWhileWaiting();
      worker.postMessage({ id, op, args } satisfies StoreCall);
      return answer;
    },
    terminate: () => worker.terminate(),
  };
}

/**
 * The embedded job store. This thread's connection opens it (the schema; a DATA_DIR it cannot use throws ConfigError,
 * as before), reads a job and its lines, and tells when there is nothing to do. The writes go to the thread, started
 * by the first that has work, so an idle service spends no thread (~13 MB), and so do the gauges' counts (a scan of
 * every queued item) once it runs. A thread that stops (a crash) refuses its waiting calls with JobStoreUnavailable;
 * the next write starts another. `started`: each thread's Worker as it starts.
 */
export function openThreadedSqliteJobStore(dataDir: string, started?: (worker: Worker) => void): JobStore {
  const here = createSqliteJobStore(dataDir);
  let thread: ReturnType<typeof startThread> | null = null;
  let closed = false;
  const call = async <T>(op: StoreOp, ...args: unknown[]): Promise<T> => {
    if (closed) throw new JobStoreUnavailable('the job store is closed');
    const t = (thread ??= startThread(dataDir, () => thread === t && (thread = null), started));
    await t.ready;
    return (await t.call(op, args)) as T;
  };
  /** No thread yet and nothing due for this poll: it answers here. */
  const quiet = (poll: keyof DueChecks, now: number) => thread === null && !here.due[poll](now);
  return {
    create: (job) => call('create', job),
    get: here.get,
    // Another key's job, or none: answered here (a stranger's DELETE starts no thread).
    cancel: async (id, keyId, now) => ((await here.get(id, keyId, now)) === null ? null : call('cancel', id, keyId, now)),
    results: here.results,
    claim: async (worker, max, now, leaseMs) => (quiet('items', now) ? [] : call('claim', worker, max, now, leaseMs)),
    renew: (worker, items, until) => call('renew', worker, items, until),
    settle: (worker, outcomes, now) => call('settle', worker, outcomes, now),
    dueWebhooks: async (now, max, leaseMs) => (quiet('webhooks', now) ? [] : call('dueWebhooks', now, max, leaseMs)),
    webhookTried: (jobId, outcome) => call('webhookTried', jobId, outcome),
    purgeExpired: async (now) => (quiet('expired', now) ? 0 : call('purgeExpired', now)),
    stats: async (now) => (thread === null ? here.stats(now) : call('stats', now)),
    async close() {
      if (closed) return;
      closed = true;
      // The running thread's own connection closed first (a thread that stopped meanwhile has none to close).
      const t = thread;
      await t?.call('close', []).catch(() => undefined);
      await t?.terminate();
      await here.close();
    },
  };
}
