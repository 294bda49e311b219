// KeyRecord values for tests of code that takes an authenticated key (limiter, usage): unique ids, server-default limits.
import type { KeyRecord } from '../../src/adapters/keys/key-store.js';
import { ApiError } from '../../src/errors.js';

let seq = 0;

export function testKeyRecord(over: Partial<KeyRecord> = {}): KeyRecord {
  seq++;
  return {
    id: `key_t${process.pid}x${seq}`,
    name: 'test',
    hash: `h${seq}`,
    status: 'active',
    perMinute: null,
    perDay: null,
    perMonth: null,
    smtpPerDay: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

/** What an authentication came to: the key's id, or the refusal's `status CODE`. */
export async function outcome(p: Promise<KeyRecord>): Promise<string> {
  try {
    return (await p).id;
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code}`;
    throw err;
  }
}
