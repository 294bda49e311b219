// Worker-thread side of the embedded job store (docs/adr/0044): the SQLite store's writes (sqlite-job-store.ts) run
// here, answering the event loop's calls by message, so its transactions and checkpoints never hold the loop.
import { parentPort, workerData } from 'node:worker_threads';
import { compactHeap } from '../files/heap-compaction.js';
import type { JobStore, NewJob } from './job-store.js';
import { createSqliteJobStore } from './sqlite-job-store.js';
import type { StoreCall, StoreOp, StoreReply, ThreadData } from './threaded-job-store.js';

/** An error as a message can carry it: the class by name, and what the caller reads of it. */
function plain(err: unknown): StoreReply['error'] {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  return { name: err.name, message: err.message, retryAfterSeconds: (err as Error & { retryAfterSeconds?: number }).retryAfterSeconds };
}

type Operation = (...args: never[]) => Promise<unknown>;

/**
 * A job of this many items or more is followed by a compacting GC of this thread's heap: finding its repeats and
 * domain order leaves ~10 MB of garbage (100,000 items) that V8 keeps committed until a full collection, which a
 * thread without other work (JOBS_WORKER=off) never runs. It takes 15-20 ms of this thread (its next calls wait that
 * long), none of the event loop's (figures: docs/adr/0048).
 */
const COMPACT_AFTER_ITEMS = 10_000;

/** The store's writes and its gauges' counts by name (its other reads are made on the event loop's own connection). */
function operations(store: JobStore): Record<StoreOp, Operation> {
  const { create, cancel, claim, renew, settle, dueWebhooks, webhookTried, purgeExpired, stats, close } = store;
  return { create, cancel, claim, renew, settle, dueWebhooks, webhookTried, purgeExpired, stats, close };
}

function serve(): void {
  const port = parentPort!;
  let ops: Record<StoreOp, Operation>;
  try {
    ops = operations(createSqliteJobStore((workerData as ThreadData).dataDir));
  } catch (err) {
    port.postMessage({ id: 0, ok: false, error: plain(err) } satisfies StoreReply);
    return;
  }
  port.postMessage({ id: 0, ok: true } satisfies StoreReply);
  port.on('message', ({ id, op, args }: StoreCall) => {
    ops[op](...(args as never[])).then(
      (value) => {
        port.postMessage({ id, ok: true, value } satisfies StoreReply);
        if (op === 'create' && (args[0] as NewJob).items.length >= COMPACT_AFTER_ITEMS) setImmediate(compactHeap);
      },
      (err: unknown) => port.postMessage({ id, ok: false, error: plain(err) } satisfies StoreReply),
    );
  });
}

serve();
