// Datasets read from files, reloaded without a restart (SIGHUP): each new copy is built beside the one in use and
// swapped in with one assignment; a file that fails keeps the data in use. docs/datasets.md "Reloading datasets".
import type { CatalogueRecords } from './datasets.js';

/** One dataset read from files (a Dataset<T>, src/adapters/files/dataset.ts): its name, files, and a fresh copy. */
export interface Reloadable {
  /** The dataset's name, as /readyz and /metrics show it. */
  readonly name: string;
  /** The files or directories a failure names. */
  files(): readonly string[];
  /**
   * Build a new copy and, once built, swap it in (one assignment), its record taken from `records` (data/datasets.json
   * as this pass read it). Rejects, leaving the old copy in use, on failure (`records` rejecting among them).
   */
  reload(records: Promise<CatalogueRecords>): Promise<unknown>;
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
}

/**
 * One line per failure, naming the file; one line for the whole pass. data/datasets.json is read once a pass, for
 * every dataset (`catalogue.reread`), not once by each.
 */
export function createReloader(items: readonly Reloadable[], logger: ReloadLogger, catalogue: { reread(): Promise<CatalogueRecords> }): Reloader {
  let running: Promise<ReloadOutcome> | null = null;
  let again: Promise<ReloadOutcome> | null = null;

  async function pass(): Promise<ReloadOutcome> {
    const outcome: ReloadOutcome = { reloaded: [], failed: [] };
    const records = catalogue.reread();
    // Each reload that reads it reports its failure; none may be left unheard (an unhandled rejection).
    records.catch(() => undefined);
    for (const item of items) {
      try {
        await item.reload(records);
        outcome.reloaded.push(item.name);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        const file = item.files().join(', ');
        outcome.failed.push({ name: item.name, file, error });
        logger.error({ dataset: item.name, file, err: error }, `reload of ${file} failed; the data loaded before stays in use`);
      }
    }
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
  };
}
