// Files and folders named by settings, read once at boot: a missing or unusable one stops the boot naming its variable.
import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from '../config.js';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

const reason = (err: unknown): string => {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return 'cannot be read';
};

/** The text of a PEM bundle holding at least one certificate (RFC 7468); anything else is a ConfigError. */
export async function readCaBundle(variable: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(variable, `${path}: ${reason(err)}`);
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
    throw new ConfigError(variable, `${path}: ${reason(err)}`);
  }
  if (!isDir) throw new ConfigError(variable, `${path} is not a directory`);
}

/** Runs load(path), turning a file that cannot be read into a ConfigError naming the variable. */
export async function loadNamedFile<T>(variable: string, path: string, load: (path: string) => Promise<T>): Promise<T> {
  try {
    return await load(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) throw new ConfigError(variable, `${path}: ${reason(err)}`);
    throw err;
  }
}
