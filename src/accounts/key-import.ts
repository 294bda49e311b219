// Bulk key import (docs/keys.md): JSON lines (RFC 8259 values, one per line) of name and optional limits, checked before any is created.
import type { NewKey } from '../adapters/keys/key-store.js';
import { MAX_LIMITS } from '../config.js';

const LIMIT_FIELDS = ['perMinute', 'perDay', 'perMonth'] as const;
const FIELDS = new Set<string>(['name', ...LIMIT_FIELDS]);

/** A line that cannot be imported; `line` counts from 1, blank lines included. */
export class ImportLineError extends Error {
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
    if (!FIELDS.has(field)) throw new ImportLineError(line, `unknown field ${JSON.stringify(field)} (expected name, perMinute, perDay, perMonth)`);
  }
  if (typeof fields.name !== 'string' || fields.name.trim() === '') throw new ImportLineError(line, 'name must be a non-empty string');
  const key: NewKey = { name: fields.name };
  for (const field of LIMIT_FIELDS) {
    const v = fields[field];
    if (v === undefined || v === null) continue; // the server default
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_LIMITS[field]) {
      throw new ImportLineError(line, `${field} must be a whole number from 1 to ${bound(MAX_LIMITS[field])}, or null for the server default`);
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
