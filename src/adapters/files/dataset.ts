// Dataset<T>: one data set the service reads from files, the same object at start, on a reload (SIGHUP), for a
// background load (GeoIP) and for a swap from outside (a download). Its name is the one /readyz, /metrics and the
// reload log lines show; a failing read keeps the value in use. docs/architecture.md "Datasets".
import { ConfigError } from '../../errors.js';
import { datasetStatus, type CatalogueRecords, type DatasetCatalogue, type DatasetRecord, type DatasetStatus } from './datasets.js';
import { fileProblem } from './startup-files.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What a dataset is read from and how: given by the capability that owns it. */
export interface DatasetSource<T> {
  /** As /readyz, /metrics and the reload lines show it; data/datasets.json has a record of that name. */
  name: string;
  /** The files or folders it is read from (a failure names them). */
  files: () => readonly string[];
  /**
   * Read a fresh copy, beside the one in use. `date` when the files carry their own (a `# date:` line, a database's
   * build date); otherwise data/datasets.json's record dates it. Absent: data built into the code (an npm package),
   * read with the code, never reloaded.
   */
  read?: () => Promise<{ value: T; date?: string | null }>;
  /** The setting that names the file: at start, a file that cannot be read is a ConfigError naming it. */
  variable?: string;
  /**
   * At start, whether a read failing on the content (a parser refusing a line) is a ConfigError naming `variable` too
   * (default: yes, the IP lists). The BIN reader skips rows it cannot use and says itself when none is left, so what
   * else it throws is a fault of ours and is told as one ("fatal: ..."), as before the Dataset mechanism (#54).
   */
  contentErrorsNameVariable?: boolean;
}

export class Dataset<T> {
  readonly name: string;
  #value: T | undefined;
  #loaded = false;
  #date: string | null = null;
  #record: DatasetRecord;
  #reloads = 0;
  #failures = 0;
  readonly #listeners: ((value: T) => void)[] = [];
  private readonly source: DatasetSource<T>;
  private readonly catalogue: DatasetCatalogue;

  constructor(source: DatasetSource<T>, catalogue: DatasetCatalogue) {
    this.name = source.name;
    this.source = source;
    this.catalogue = catalogue;
    this.#record = catalogue.record(source.name);
  }

  /** Whether a value can be read again without a restart (false for data built into the code). */
  get reloadable(): boolean {
    return this.source.read !== undefined;
  }

  files(): readonly string[] {
    return this.source.files();
  }

  /** The value in use; undefined before the first load (a background load not finished, or failed). */
  get current(): T | undefined {
    return this.#value;
  }

  /** The value in use; a capability reads it only after its load (a programming error otherwise). */
  get value(): T {
    if (!this.#loaded) throw new Error(`dataset ${this.name} read before it was loaded`);
    return this.#value as T;
  }

  /**
   * The first load (start-up), dated by the records the catalogue read at start (not read again for each dataset):
   * a file that cannot be read is a ConfigError naming the setting, when there is one.
   */
  async load(): Promise<T> {
    try {
      return await this.#readAndSwap(this.catalogue);
    } catch (err) {
      const { variable, contentErrorsNameVariable = true } = this.source;
      if (!variable || err instanceof ConfigError) throw err;
      if ((err as NodeJS.ErrnoException).code) throw new ConfigError(variable, `${this.files().join(', ')}: ${fileProblem(err)}`);
      if (!contentErrorsNameVariable) throw err;
      throw new ConfigError(variable, err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * Read the files again, and the dataset's record from `records` (SIGHUP's pass reads data/datasets.json once for
   * all its datasets; alone, a refresh that wrote a new file, this one reads it), and swap the new copy in with one
   * assignment. Rejects on failure, the value in use unchanged. Counted (dataset_reloads_total, ..._failures_total).
   */
  async reload(records?: Promise<CatalogueRecords>): Promise<T> {
    try {
      const value = await this.#readAndSwap(records);
      this.#reloads++;
      return value;
    } catch (err) {
      this.#failures++;
      throw err;
    }
  }

  /** Reloads that succeeded and that failed since start (the first load is not one). */
  counts(): { reloads: number; failures: number } {
    return { reloads: this.#reloads, failures: this.#failures };
  }

  async #readAndSwap(records?: CatalogueRecords | Promise<CatalogueRecords>): Promise<T> {
    const read = this.source.read;
    if (!read) throw new Error(`dataset ${this.name} is built into the code: a restart reads a new version`);
    const [catalogue, { value, date }] = await Promise.all([records ?? this.catalogue.reread(), read()]);
    this.#record = catalogue.record(this.name);
    this.replace(value, date);
    return value;
  }

  /** Swap a value made elsewhere in (a downloaded refresh); `date` when it carries one. */
  replace(value: T, date?: string | null): void {
    this.#value = value;
    this.#loaded = true;
    this.#date = date && DATE.test(date) ? date : null;
    for (const listener of this.#listeners) listener(value);
  }

  /** Called after each swap (a capability rebuilds what it derives from several datasets). */
  onSwap(listener: (value: T) => void): void {
    this.#listeners.push(listener);
  }

  /** Its date, validity and state at `now`. */
  status(now: Date = new Date()): DatasetStatus {
    return datasetStatus({ ...this.#record, date: this.#date ?? this.#record.date }, now);
  }
}

/** A dataset built into the code (an npm package's tables): dated by its record, never reloaded. */
export function builtInDataset(name: string, catalogue: DatasetCatalogue, npmPackage: string): Dataset<null> {
  const dataset = new Dataset<null>({ name, files: () => [`npm package ${npmPackage}`] }, catalogue);
  dataset.replace(null);
  return dataset;
}
