// Dataset registry: every data set the service ships, its date (ISO 8601 calendar date), validity and state.
// The records live in data/datasets.json (rewritten by `make data`); ages and sources: docs/data-sources.md.
import cluster from 'node:cluster';
import { readFile } from 'node:fs/promises';

export type DatasetState = 'fresh' | 'aged' | 'expired';

export interface DatasetRecord {
  name: string;
  description: string;
  version: string;
  /** When the data was produced (YYYY-MM-DD). */
  date: string;
  /** Last day the publisher says the data is valid (YYYY-MM-DD), or null when it names none. */
  validUntil: string | null;
  /** The documented maximum age in days: older data is "aged". */
  maxAgeDays: number;
}

export interface DatasetStatus {
  name: string;
  date: string;
  validUntil: string | null;
  maxAgeDays: number;
  ageDays: number;
  state: DatasetState;
}

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Numeric form of a state for the metrics gauge. */
export const STATE_VALUE: Readonly<Record<DatasetState, number>> = { fresh: 0, aged: 1, expired: 2 };

/**
 * The state of a dataset at `now`: expired after the end of its validUntil day (UTC), else aged when more than
 * maxAgeDays old, else fresh.
 */
export function datasetStatus(record: DatasetRecord, now: Date): DatasetStatus {
  const ageDays = Math.floor((now.getTime() - Date.parse(`${record.date}T00:00:00Z`)) / DAY_MS);
  const expired = record.validUntil !== null && now.getTime() >= Date.parse(`${record.validUntil}T00:00:00Z`) + DAY_MS;
  const state: DatasetState = expired ? 'expired' : ageDays > record.maxAgeDays ? 'aged' : 'fresh';
  return { name: record.name, date: record.date, validUntil: record.validUntil, maxAgeDays: record.maxAgeDays, ageDays, state };
}

function checkRecord(r: DatasetRecord, path: string): DatasetRecord {
  const ok =
    typeof r.name === 'string' &&
    DATE.test(r.date) &&
    (r.validUntil === null || DATE.test(r.validUntil)) &&
    Number.isInteger(r.maxAgeDays) &&
    r.maxAgeDays > 0;
  if (!ok) throw new Error(`${path}: dataset ${JSON.stringify(r.name)} needs a name, date, validUntil and maxAgeDays`);
  return r;
}

/** The file's text (tests count the reads through a reader of their own). */
type ReadText = (path: string) => Promise<string>;
const readUtf8: ReadText = (path) => readFile(path, 'utf8');

/** Read the dataset records. */
export async function loadDatasets(path: string, readText: ReadText = readUtf8): Promise<DatasetRecord[]> {
  const body = JSON.parse(await readText(path)) as { datasets: DatasetRecord[] };
  return body.datasets.map((r) => checkRecord(r, path));
}

/** data/datasets.json as read once: each dataset's record (description, version, validity, maximum age, date). */
export interface CatalogueRecords {
  /** Its record; none is an error (at start a programming error: add it to data/datasets.json; on a reload a failure). */
  record(name: string): DatasetRecord;
}

/**
 * data/datasets.json: each dataset's record, and the date of a dataset whose files carry none. The records read at
 * start serve the first loads; a reload pass reads the file once more for all its datasets.
 */
export interface DatasetCatalogue extends CatalogueRecords {
  readonly path: string;
  /** The datasets it records, in its order. */
  readonly names: readonly string[];
  /** The file read again, once, whatever number of datasets take their records from it (rejects when unreadable). */
  reread(): Promise<CatalogueRecords>;
}

const recordsOf = (records: readonly DatasetRecord[], path: string): CatalogueRecords => ({
  record(name) {
    const found = records.find((r) => r.name === name);
    if (!found) throw new Error(`${path} has no record of dataset ${JSON.stringify(name)}`);
    return found;
  },
});

export async function openCatalogue(path: string, readText: ReadText = readUtf8): Promise<DatasetCatalogue> {
  const records = await loadDatasets(path, readText);
  return {
    path,
    names: records.map((r) => r.name),
    ...recordsOf(records, path),
    reread: async () => recordsOf(await loadDatasets(path, readText), path),
  };
}

/** The datasets that are aged or expired. */
export function staleDatasets(statuses: readonly DatasetStatus[]): DatasetStatus[] {
  return statuses.filter((s) => s.state !== 'fresh');
}

interface WarnLogger {
  warn(fields: object, msg: string): void;
}

/**
 * One warning line per aged or expired dataset, logged by one process: the single server, or the first worker
 * when WORKERS>1 forks several (each composes the same data). Returns how many were logged.
 */
export function warnStaleDatasets(logger: WarnLogger, statuses: readonly DatasetStatus[]): number {
  if (cluster.isWorker && cluster.worker?.id !== 1) return 0;
  const stale = staleDatasets(statuses);
  for (const s of stale) {
    logger.warn({ dataset: s.name, date: s.date, validUntil: s.validUntil, maxAgeDays: s.maxAgeDays }, `dataset ${s.name} is ${s.state}: run make data`);
  }
  return stale.length;
}
