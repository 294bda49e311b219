// Lists that refresh themselves (DATA_REFRESH=on): each list downloaded from its publisher on its own schedule,
// parsed off the event loop, checked, written atomically into DATA_DIR/lists/ and swapped in the way a SIGHUP reload
// swaps it; a failure keeps the list in use, logs one warning and counts. docs/data-sources.md "Automatic refresh".
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ParseResult } from './off-loop.js';

/** One list the refresher keeps current. */
export interface RefreshList {
  /** The dataset's name (/readyz, /metrics, data/datasets.json). */
  name: string;
  /** How often: Tor exits hourly, the others daily. */
  intervalMs: number;
  /** Its file in the refresher's folder; the service reads it at start and on SIGHUP once it exists. */
  file: string;
  /** Download the publisher's file(s) and parse them off the event loop; `date` dates the data. */
  fetch(path: string): Promise<{ result: ParseResult; date: string }>;
  /** Counts of the data in use before the first refresh (the first shrink check compares with these), or null. */
  inUse(): Promise<Record<string, number> | null>;
}

interface WarnLogger {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

export interface Refresher {
  /** Schedule every list: the first run when its saved copy is due (at once when there is none), then by interval. */
  start(): Promise<void>;
  stop(): void;
  /** Refresh one list now; true when the new data is in use. Never rejects. */
  refresh(name: string): Promise<boolean>;
  counts(): { refreshes: Record<string, number>; failures: Record<string, number> };
}

/** Why the new counts must not replace the old: a part (or the whole) lost more than half its entries. */
export function shrinkProblem(before: Record<string, number> | null, after: Record<string, number>): string | null {
  if (!before) return null;
  for (const [part, old] of Object.entries(before)) {
    const now = after[part];
    if (now !== undefined && now * 2 < old) return `${part === 'total' ? 'the list' : part} shrank from ${old} to ${now} entries (more than half)`;
  }
  return null;
}

/** Write beside the target and rename over it: a reader sees the old file or the new one, never half of one. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o644 });
  await rename(tmp, path);
}

export interface RefresherOptions {
  /** DATA_DIR/lists: where the downloads are written, and read from by the service. */
  dir: string;
  lists: readonly RefreshList[];
  /**
   * Swap the list just written in: the dataset's own reload (the one SIGHUP runs) reads it from `path`, in this process
   * or, under WORKERS>1, in every worker. Rejects when the new file cannot be used (the old data stays in use).
   */
  swap(name: string, path: string): Promise<void>;
  logger: WarnLogger;
  /** After each attempt, with the counts (the primary of WORKERS>1 passes them to the workers for /metrics). */
  outcome?: (counts: ReturnType<Refresher['counts']>) => void;
  /** Delay of a first download when no saved copy is due later (default 5 s: not during the start-up). */
  firstDelayMs?: number;
}

export function createRefresher(o: RefresherOptions): Refresher {
  const refreshes: Record<string, number> = Object.fromEntries(o.lists.map((l) => [l.name, 0]));
  const failures: Record<string, number> = Object.fromEntries(o.lists.map((l) => [l.name, 0]));
  const baseline = new Map<string, Record<string, number>>();
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Map<string, Promise<boolean>>();
  let stopped = false;

  async function once(list: RefreshList): Promise<boolean> {
    const path = join(o.dir, list.file);
    try {
      const { result, date } = await list.fetch(path);
      const problem = shrinkProblem(baseline.get(list.name) ?? (await list.inUse()), result.counts);
      if (problem) throw new Error(problem);
      await mkdir(o.dir, { recursive: true });
      await writeAtomically(path, result.text);
      await o.swap(list.name, path);
      baseline.set(list.name, result.counts);
      refreshes[list.name]++;
      o.logger.info({ dataset: list.name, entries: result.entries, date }, `${list.name} refreshed`);
      return true;
    } catch (err) {
      failures[list.name]++;
      o.logger.warn({ dataset: list.name, err: err instanceof Error ? err.message : String(err) }, `refresh of ${list.name} failed; the data in use stays`);
      return false;
    }
  }

  const counts = () => ({ refreshes: { ...refreshes }, failures: { ...failures } });

  function refresh(name: string): Promise<boolean> {
    const list = o.lists.find((l) => l.name === name);
    if (!list) return Promise.resolve(false);
    let run = running.get(name);
    if (!run) {
      run = once(list).finally(() => {
        running.delete(name);
        o.outcome?.(counts());
      });
      running.set(name, run);
    }
    return run;
  }

  function schedule(list: RefreshList, delayMs: number): void {
    if (stopped) return;
    const timer = setTimeout(() => void refresh(list.name).then(() => schedule(list, list.intervalMs)), Math.max(0, delayMs));
    timer.unref();
    timers.set(list.name, timer);
  }

  return {
    async start() {
      for (const list of o.lists) {
        const saved = await stat(join(o.dir, list.file)).then((s) => s.mtimeMs, () => null);
        const due = saved === null ? 0 : saved + list.intervalMs - Date.now();
        schedule(list, Math.max(o.firstDelayMs ?? 5_000, due));
      }
    },
    stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
    },
    refresh,
    counts,
  };
}
