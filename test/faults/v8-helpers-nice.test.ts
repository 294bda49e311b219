// A full GC's helpers never take the event loop's CPU (docs/adr/0045): a serving process sets V8's helper threads
// (named "V8Worker" by Node) to nice 5 and leaves the main thread and libuv's pool as started (proc(5): comm, stat).
// Also holds the runtime to that name: a Node that renamed its helpers would leave them at 0, and this fails.
// @module-tag slow (child processes)
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { threadsOf } from '../support/proc-stat.js';
import { startServerProcess } from '../support/server-process.js';

describe.runIf(process.platform === 'linux')("a serving process's threads", () => {
  it("V8's helpers at nice 5, every other thread as started", async () => {
    const server = await startServerProcess();
    try {
      const threads = threadsOf(server.child.pid!);
      const helpers = threads.filter((t) => t.name === 'V8Worker');
      expect(helpers.length).toBeGreaterThan(0);
      expect(new Set(helpers.map((t) => t.nice))).toEqual(new Set([Math.max(5, getPriority())]));
      const others = threads.filter((t) => t.name !== 'V8Worker');
      expect(others.some((t) => t.name.startsWith('libuv-worker'))).toBe(true);
      expect(new Set(others.map((t) => t.nice))).toEqual(new Set([getPriority()]));
    } finally {
      await server.stop();
    }
  });
});
