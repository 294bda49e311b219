// Bulk key import (docs/keys.md): JSON lines (RFC 8259 values, one per line) of name and optional limits, all checked before any is created, then created in batches.
import type { KeyRecord, KeyStore, NewKey } from '../adapters/keys/key-store.js';
import { MAX_LIMITS } from '../config.js';

const LIMIT_FIELDS = ['perMinute', 'perDay', 'perMonth', 'smtpPerDay'] as const;
const FIELDS = new Set<string>(['name', ...LIMIT_FIELDS]);

/** A line that cannot be imported; `line` counts from 1, blank lines included. */
class ImportLineError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

const bound = (n: number) => n.toExponential().replace('e+', 'e');

function parseLine(text: string, line: number): NewKey {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ImportLineError(line, 'not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ImportLineError(line, 'must be a JSON object like {"name": "alice", "perDay": 1000}');
  }
  const fields = value as Record<string, unknown>;
  for (const field of Object.keys(fields)) {
    if (!FIELDS.has(field)) throw new ImportLineError(line, `unknown field ${JSON.stringify(field)} (expected name, perMinute, perDay, perMonth, smtpPerDay)`);
  }
  if (typeof fields.name !== 'string' || fields.name.trim() === '') throw new ImportLineError(line, 'name must be a non-empty string');
  const key: NewKey = { name: fields.name };
  for (const field of LIMIT_FIELDS) {
    const v = fields[field];
    if (v === undefined || v === null) continue; // the server default
    const min = field === 'smtpPerDay' ? 0 : 1; // a key that may not verify over SMTP
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > MAX_LIMITS[field]) {
      throw new ImportLineError(line, `${field} must be a whole number from ${min} to ${bound(MAX_LIMITS[field])}, or null for the server default`);
    }
    key[field] = v;
  }
  return key;
}

/** Every key of the file, in order; the first bad line throws ImportLineError (so nothing is created). */
export function parseKeyLines(text: string): NewKey[] {
  const keys: NewKey[] = [];
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line !== '') keys.push(parseLine(line, i + 1));
  }
  return keys;
}

/** Keys per transaction (SQLite) or script (Redis): no other process waits long for the store while a file is imported. */
export const IMPORT_BATCH = 1000;

/** The import stopped part-way: `done` keys were created (and handed to onBatch) before `cause`. */
export class ImportStoppedError extends Error {
  constructor(
    readonly done: number,
    readonly total: number,
    readonly cause: unknown,
  ) {
    super(`${done} of ${total} keys imported before: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

export interface ImportOptions {
  /** Each batch's created keys, once the store holds them (print them now: a later batch may fail). */
  onBatch(created: Array<{ record: KeyRecord; key: string }>): void;
  /** After each batch: keys created so far, of how many. */
  onProgress?(done: number, total: number): void;
  /** Between batches, given how long the last one took: lets other processes' writers in (the SQLite store's yieldLock). */
  pause?(heldMs: number): Promise<void>;
  batch?: number;
}

/** Create `inputs` in batches of IMPORT_BATCH, each all or none; resolves with the number created. */
export async function importInBatches(store: Pick<KeyStore, 'createMany'>, inputs: readonly NewKey[], opts: ImportOptions): Promise<number> {
  const size = opts.batch ?? IMPORT_BATCH;
  let done = 0;
  while (done < inputs.length) {
    const t0 = performance.now();
    let created;
    try {
      created = await store.createMany(inputs.slice(done, done + size));
    } catch (err) {
      throw new ImportStoppedError(done, inputs.length, err);
    }
    done += created.length;
    opts.onBatch(created);
    opts.onProgress?.(done, inputs.length);
    if (done < inputs.length) await opts.pause?.(performance.now() - t0);
  }
  return done;
}
