// Files and folders named by settings, read once at boot: a missing or unusable one stops the boot naming its variable.
import { X509Certificate } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../../errors.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A file system error as a short phrase (no errno text, no syscall). */
export const fileProblem = (err: unknown): string => {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EPERM') return 'operation not permitted';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  return 'cannot be read';
};

/** The text of a PEM bundle holding at least one certificate (RFC 7468); anything else is a ConfigError. */
export async function readCaBundle(variable: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(variable, `${path}: ${fileProblem(err)}`);
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new ConfigError(variable, `${path} holds no PEM certificate`);
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch {
      throw new ConfigError(variable, `${path}: certificate ${i + 1} does not parse`);
    }
  });
  return text;
}

/** Resolves when path is a readable directory; a ConfigError otherwise. */
export async function requireDirectory(variable: string, path: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch (err) {
    throw new ConfigError(variable, `${path}: ${fileProblem(err)}`);
  }
  if (!isDir) throw new ConfigError(variable, `${path} is not a directory`);
}

/** Directories the service creates are its owner's alone (they hold the key store); an existing one is left as it is. */
const PRIVATE_DIRECTORY_MODE = 0o700;
/** Files the service creates under DATA_DIR (the database, its WAL and shared-memory files). */
const PRIVATE_FILE_MODE = 0o600;

/**
 * Make sure `path` is a directory, creating the missing ones one level at a time, mode 0700 (start-up only:
 * synchronous). A directory that exists keeps its mode: the operator chose it. Node's own recursive mkdir never
 * returns under /proc; any failure is a ConfigError naming the variable.
 */
export function ensureDirectorySync(variable: string, path: string): void {
  const missing: string[] = [];
  for (let cur = resolve(path); ; cur = dirname(cur)) {
    try {
      if (statSync(cur).isDirectory()) break;
      throw new ConfigError(variable, cur === resolve(path) ? `${path} is not a directory` : `${path}: ${cur} is not a directory`);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(cur) === cur) throw new ConfigError(variable, `${path}: ${fileProblem(err)}`);
      missing.unshift(cur);
    }
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode: PRIVATE_DIRECTORY_MODE });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigError(variable, `${path} cannot be created: ${fileProblem(err)}`);
    }
  }
}

/**
 * Make sure the file at `path` exists with mode 0600, creating it empty when absent, and tighten `companions`
 * (files the service made beside it, when present) to 0600 too (start-up only: synchronous). SQLite creates a
 * database's -wal and -shm files with the database file's own mode, so a database created here keeps them
 * private as well. Tightening is best effort: a file the service may not chmod is left as it is.
 */
export function ensurePrivateFileSync(path: string, companions: readonly string[] = []): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, ...companions]) {
    try {
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, PRIVATE_FILE_MODE);
    } catch {
      // Absent (a companion not created yet) or not ours to change.
    }
  }
}
