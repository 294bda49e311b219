// A compacting garbage collection on the calling thread's V8 heap (V8's gc extension, exposed for one call).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One synchronous, compacting collection of this thread's heap that also returns its free pages: V8 otherwise keeps
 * a heap's garbage committed until its memory reducer runs after a long idle spell. The last-resort flavour also
 * shrinks the young generation (a plain gc() keeps it). The gc function is taken from a throw-away context, made
 * while --expose-gc is on, so that it never appears on globalThis, and its options object is made in that context
 * too, where gc() reads it. Never on the request path (docs/adr/0009, 0048).
 */
export function compactHeap(): void {
  setFlagsFromString('--expose-gc');
  try {
    runInNewContext("gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })");
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
