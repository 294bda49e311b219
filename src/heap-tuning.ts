// Heap tuning for a long-running server: V8's young and old generations bounded, start-up garbage returned at once,
// the collector's helper threads behind the event loop, glibc malloc's arenas and mmap threshold set in the start
// commands' environment.
import { setFlagsFromString } from 'node:v8';
import { compactHeap } from './adapters/files/heap-compaction.js';
import { lowerThreadPriorities } from './adapters/files/thread-priority.js';

/**
 * The node flags every start command passes (package.json's start, make run, the image's CMD, the systemd unit in
 * docs/deploy.md; test/unit/start-commands.test.ts holds them equal): the main thread's young generation capped at two
 * 4 MB semi-spaces. Under load V8 grew it to ~26 MB and returned it only slowly after the load; the cap costs a few
 * percent of CPU per answer, traded for that memory (the figures: docs/adr/0039). V8 sizes the heap at start-up: a
 * command-line flag, not a setFlagsFromString here.
 */
export const NODE_START_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/**
 * The environment every start command sets (where NODE_START_FLAGS go; an operator's own value wins in npm start and
 * make run). Two malloc arenas instead of glibc's eight per core (ADR 0034). And glibc's mmap threshold fixed at 8 KB:
 * V8's compiler zones (27-42 MB at the peak of a burst of password requests) are freed among longer-lived allocations,
 * and glibc kept 20-30 MB of them resident in its arenas after the burst; with the threshold each block of 8 KB or
 * more gets pages of its own, returned to the system when freed (figures and cost: docs/adr/0039). Fixing it also
 * stops glibc raising it (up to 32 MB) after the start-up's large buffers are freed. Debian's glibc reads it (2.26+).
 */
export const NODE_START_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=8192' };

/**
 * After each full GC, let the old generation grow to 1.35x what survived before the next one (V8 picks up to
 * 4x by itself). Under steady load the scavenger promotes in-flight request objects; with V8's own factor the
 * heap kept growing under load instead of collecting (docs/adr/0009). At 1.2x a bulk's in-flight results (ten
 * 1,000-address email bulks) set off a full GC every few seconds, each stealing its CPU from other requests; at
 * 1.35x they fit. RSS after password requests and throughput did not move; a 100,000-item job ends ~7 MB higher
 * (docs/adr/0042). Set once at start; V8 reads it at every GC.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=35');
}

/**
 * Boot (spec compilation, the BIN and e-mail tables, the GeoIP files) leaves ~45 MB of garbage in a heap
 * V8 keeps committed until its memory reducer runs after a long idle spell: the service would carry it
 * into its first minute of load (docs/adr/0009). One compacting GC after boot gives most of it back at once (start-up
 * churn had grown the young generation to 64 MB committed on Node 24). Called once per process, never on the request
 * path.
 */
export function compactHeapAfterBoot(): void {
  compactHeap();
}

/**
 * V8's helper threads (Node names them "V8Worker": concurrent marking and sweeping, parallel scavenging, background
 * compiling) at nice 5 in a serving process, the main thread and libuv's pool left as started. On a service with one
 * CPU a full GC's concurrent marking took that CPU from the event loop for 10-20 ms at a time, and every request
 * waited. At 5 the loop gets three quarters of a contended CPU (as against the zxcvbn threads, also at 5); at 10 the
 * loop did better still, but sweeping fell behind a burst of password requests and RSS after it rose ~8 MB. A marking
 * that falls behind is finished by the main thread, as V8 does anyway. Figures: docs/adr/0045.
 */
export function helpersYieldToTheEventLoop(): number {
  return lowerThreadPriorities(5, (name) => name === 'V8Worker');
}
