// A job worker's batch work yields the CPU to servers on the same host (docs/adr/0043): `npm run job-worker` sets
// every thread of its process, those V8 started before it ran included, to JOBS_WORKER_NICE (proc(5): field 19).
// @module-tag slow (child processes)
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { threadsOf } from '../support/proc-stat.js';
import { startJobWorkerProcess } from '../support/server-process.js';

describe.runIf(process.platform === 'linux')('a job worker process at JOBS_WORKER_NICE', () => {
  it.each([
    ['7', 7],
    ['0', getPriority()], // 0: left as started (the test runner's own value)
  ])('JOBS_WORKER_NICE=%s: every thread at %i', async (setting, expected) => {
    const worker = await startJobWorkerProcess({ env: { JOBS_WORKER_NICE: setting } });
    try {
      const nices = threadsOf(worker.child.pid!).map((t) => t.nice);
      expect(nices.length).toBeGreaterThan(4); // the main thread and V8's and libuv's
      expect(new Set(nices)).toEqual(new Set([expected]));
      expect(worker.stdout()).toContain(`"nice":${Number(setting)}`);
    } finally {
      await worker.stop();
    }
  });
});
