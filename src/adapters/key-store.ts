// API key store port: keys are random 192-bit secrets, kept only as SHA-256 hashes.
import { createHash, randomBytes } from 'node:crypto';

export type KeyStatus = 'active' | 'inactive' | 'revoked';

export interface KeyLimits {
  /** null = the server's default (RATE_LIMIT_PER_MINUTE, QUOTA_PER_DAY, QUOTA_PER_MONTH). */
  perMinute: number | null;
  perDay: number | null;
  perMonth: number | null;
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

export interface KeyStore {
  create(input: NewKey): Promise<{ record: KeyRecord; key: string }>;
  list(): Promise<KeyRecord[]>;
  get(id: string): Promise<KeyRecord | null>;
  setStatus(id: string, status: KeyStatus): Promise<boolean>;
  updateLimits(id: string, limits: Partial<KeyLimits>): Promise<boolean>;
  /**
   * A token that changes whenever any key changes (here or in another process),
   * so a cache can reload only when needed.
   */
  version(): Promise<string>;
  close(): Promise<void>;
}

/** SHA-256 of the key, hex: the only form in which a key is stored or compared. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateKey(): string {
  return `vls_${randomBytes(24).toString('base64url')}`;
}

export function generateKeyId(): string {
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
    createdAt: new Date().toISOString(),
  };
  return { record, key };
}
