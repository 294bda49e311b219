// What a test made (stores, servers, processes, temporary folders), undone after each test, the last made first:
// one place for the afterEach loop and the temporary folder that key-directory, store-lock and the bounded-writes
// tests each wrote for themselves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

export interface Cleanups {
  /** Undo `fn` after this test (awaited, in reverse order of pushing). */
  push(fn: () => Promise<void> | void): void;
  /** A new folder under the system's temporary one, removed after this test. */
  tempDir(prefix: string): string;
}

/** Call at the top of a test file: registers the afterEach that runs what was pushed. */
export function cleanupAfterEach(): Cleanups {
  const undo: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of undo.splice(0).reverse()) await fn();
  });
  return {
    push: (fn) => void undo.push(fn),
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      undo.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}
