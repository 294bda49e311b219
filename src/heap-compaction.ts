// Returns start-up garbage to the OS once, after boot (one full, compacting GC), instead of ~40 s later.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';


/**
 * Boot (spec compilation, the BIN and e-mail tables, the GeoIP files) leaves ~45 MB of garbage in a heap
 * V8 keeps committed until its memory reducer runs after a long idle spell: the service would carry it
 * into its first minute of load (measured: RSS 227 MB idle, 184 MB after the reducer). One compacting GC
 * after boot gives it back at once. Called once per process, never on the request path; the gc function
 * is taken from a throw-away context so that it never appears on globalThis.
 */
export function compactHeapAfterBoot(): void {
  setFlagsFromString('--expose-gc');
  try {
    // Called without options: Node 20's V8 reads an options object from another context as a minor GC.
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
