// Datasets read from files, reloaded without a restart (SIGHUP): each new copy is built beside the one in use and
// swapped in with one assignment; a file that fails keeps the data in use. docs/datasets.md "Reloading datasets".

/** One dataset read from files: what it is called, where it comes from, and how to build a fresh copy. */
export interface Reloadable {
  /** Dataset name(s) as /readyz and /metrics show them. */
  name: string;
  /** The file or directory a failure names. */
  file: () => string;
  /** Build a new copy and, once built, swap it in (one assignment). Rejects, leaving the old copy in use, on failure. */
  reload(): Promise<void>;
}

interface ReloadOutcome {
  reloaded: string[];
  failed: { name: string; file: string; error: string }[];
}

interface ReloadLogger {
  info(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

export interface Reloader {
  /**
   * Reload every dataset, one after another (each new copy is held beside its old one for a moment: one at a time
   * bounds that to the largest). A call while a reload runs is not lost: one more pass runs after it.
   */
  reloadAll(): Promise<ReloadOutcome>;
  /** Completed reloads and failed ones, by dataset (counters for /metrics). */
  counts(): { reloads: Record<string, number>; failures: Record<string, number> };
}

/** One line per failure, naming the file; one line for the whole pass. */
export function createReloader(items: readonly Reloadable[], logger: ReloadLogger, after: () => void = () => undefined): Reloader {
  const reloads: Record<string, number> = Object.fromEntries(items.map((i) => [i.name, 0]));
  const failures: Record<string, number> = Object.fromEntries(items.map((i) => [i.name, 0]));
  let running: Promise<ReloadOutcome> | null = null;
  let again: Promise<ReloadOutcome> | null = null;

  async function pass(): Promise<ReloadOutcome> {
    const outcome: ReloadOutcome = { reloaded: [], failed: [] };
    for (const item of items) {
      try {
        await item.reload();
        reloads[item.name]++;
        outcome.reloaded.push(item.name);
      } catch (err) {
        failures[item.name]++;
        const error = err instanceof Error ? err.message : String(err);
        outcome.failed.push({ name: item.name, file: item.file(), error });
        logger.error({ dataset: item.name, file: item.file(), err: error }, `reload of ${item.file()} failed; the data loaded before stays in use`);
      }
    }
    after();
    logger.info({ pid: process.pid, reloaded: outcome.reloaded, failed: outcome.failed.map((f) => f.name) }, 'datasets reloaded');
    return outcome;
  }

  return {
    reloadAll() {
      if (running === null) {
        running = pass().finally(() => {
          running = null;
        });
        return running;
      }
      again ??= running.then(() => {
        again = null;
        return this.reloadAll();
      });
      return again;
    },
    counts: () => ({ reloads: { ...reloads }, failures: { ...failures } }),
  };
}
