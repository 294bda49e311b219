// API key store port: keys are random 192-bit secrets, kept only as SHA-256 hashes.
import { createHash, randomBytes } from 'node:crypto';

export type KeyStatus = 'active' | 'inactive' | 'revoked';

export interface KeyLimits {
  /** null = the server's default (RATE_LIMIT_PER_MINUTE, QUOTA_PER_DAY, QUOTA_PER_MONTH). */
  perMinute: number | null;
  perDay: number | null;
  perMonth: number | null;
  /** SMTP verifications per UTC day (docs/limits.md); null = SMTP_DAILY_PER_KEY; 0 = no SMTP verification at all. */
  smtpPerDay: number | null;
}

export interface KeyRecord extends KeyLimits {
  id: string;
  name: string;
  hash: string;
  status: KeyStatus;
  createdAt: string;
}

export interface NewKey extends Partial<KeyLimits> {
  name: string;
}

/**
 * What changed in the store since a cursor (the change feed, docs/keys.md). `hashes` are the key hashes
 * whose records changed (created, status, limits), oldest first. `reset` means the changes since the
 * cursor cannot be listed (too many, pruned, a store that started afresh, a writer that does not record
 * them): a cache must forget everything it holds. The first call (cursor null) always resets.
 */
export interface KeyChanges {
  cursor: string;
  hashes: string[];
  reset: boolean;
}

export interface KeyStore {
  create(input: NewKey): Promise<{ record: KeyRecord; key: string }>;
  /** All of them or none (one transaction); in the order given. */
  createMany(inputs: readonly NewKey[]): Promise<Array<{ record: KeyRecord; key: string }>>;
  /** Every key: for the CLI only, never the request path. */
  list(): Promise<KeyRecord[]>;
  get(id: string): Promise<KeyRecord | null>;
  /** The key whose SHA-256 is `hash`: one indexed lookup (SQLite) or one round trip (Redis). */
  findByHash(hash: string): Promise<KeyRecord | null>;
  /** True when the store holds no key at all (start-up creates the first one). */
  isEmpty(): Promise<boolean>;
  setStatus(id: string, status: KeyStatus): Promise<boolean>;
  updateLimits(id: string, limits: Partial<KeyLimits>): Promise<boolean>;
  /** The change feed: key hashes changed after `cursor` (here or in another process). */
  changes(cursor: string | null): Promise<KeyChanges>;
  close(): Promise<void>;
}

/** At most this many hashes per changes() answer: beyond it a cache is cheaper to clear than to walk. */
export const MAX_LISTED_CHANGES = 1000;

/** SHA-256 of the key, hex: the only form in which a key is stored or compared. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function generateKey(): string {
  return `vls_${randomBytes(24).toString('base64url')}`;
}

function generateKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}

/** A fresh active key and the record every store keeps of it (the key itself is returned, never kept). */
export function newKeyRecord(input: NewKey): { record: KeyRecord; key: string } {
  const key = generateKey();
  const record: KeyRecord = {
    id: generateKeyId(),
    name: input.name,
    hash: hashKey(key),
    status: 'active',
    perMinute: input.perMinute ?? null,
    perDay: input.perDay ?? null,
    perMonth: input.perMonth ?? null,
    smtpPerDay: input.smtpPerDay ?? null,
    createdAt: new Date().toISOString(),
  };
  return { record, key };
}
