// Redis faults end to end (REDIS_URL through a TCP relay to a real redis-server): killed or hung, every operation still answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { redisAvailable, startRedisServer, type TestRedis } from '../support/redis-server.js';
import { startFaultyTcp, unexpectedErrors, watchLeaks, type FaultyTcp } from './fault-upstreams.js';
import { startUpstreams, validRequests, type Upstreams } from './fixtures.js';

const HAVE_REDIS = redisAvailable();

/** The documented answer of each operation here: 200, except the own-IP lookup from loopback (404). */
const expected = (operationId: string) => (operationId === 'lookupOwnIp' ? 404 : 200);

describe.skipIf(!HAVE_REDIS)('Redis faults', () => {
  const leaks = watchLeaks();
  let redis: TestRedis;
  let relay: FaultyTcp;
  let up: Upstreams;
  let h: Harness;
  let closed = false;

  async function closeAll(): Promise<void> {
    if (closed) return;
    closed = true;
    await h?.close();
    await relay?.close();
    await up?.close();
    await redis?.stop();
  }

  beforeAll(async () => {
    leaks.start();
    redis = await startRedisServer();
    relay = await startFaultyTcp(redis.port);
    up = await startUpstreams();
    h = await startHarness({ ...up.env, REDIS_URL: `redis://127.0.0.1:${relay.port}` });
  });
  afterAll(async () => {
    await closeAll();
    leaks.stop();
  });

  /** Every operation once. Answering at all is the check: a request hanging on Redis fails the test at its timeout. */
  async function everyOperation(): Promise<Array<{ operationId: string; status: number }>> {
    const out = [];
    for (const r of validRequests()) {
      const res = await h.call(r.path, { method: r.method, headers: r.headers, body: r.body });
      out.push({ operationId: r.operationId, status: res.status });
    }
    return out;
  }

  const readyz = async () => (await h.fetch('/readyz')).status;
  /** limits_counted_alone_total and readiness_check{check="limits"} from /metrics. */
  async function limitsMetrics(): Promise<{ alone: number; ready: number }> {
    const text = await (await h.fetch('/metrics')).text();
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
    return { alone: value(/^limits_counted_alone_total (\d+)$/m), ready: value(/^readiness_check\{check="limits"\} (\d)$/m) };
  }

  /** /readyz's status once it is `want`, else (at the deadline) the last one. */
  async function readyzBecomes(want: number): Promise<number> {
    return waitFor(async () => ((await readyz()) === want ? want : null), { intervalMs: 100, what: `/readyz ${want}` }).catch(readyz);
  }

  // The first password estimate boots a zxcvbn worker thread: seconds of CPU on a loaded machine (a hang guard, not a timing).
  it('answers every operation normally while Redis is up', { timeout: 180_000 }, async () => {
    for (const r of await everyOperation()) expect(r.status, r.operationId).toBe(expected(r.operationId));
    expect(await readyz()).toBe(200);
    expect(await limitsMetrics()).toEqual({ alone: 0, ready: 1 });
  });

  it('hung (connections open, no answers): every operation still answers in time; /readyz says not ready', { timeout: 180_000 }, async () => {
    relay.freeze();
    relay.mode = 'hang';
    try {
      for (const r of await everyOperation()) {
        expect(r.status, r.operationId).toBe(expected(r.operationId));
      }
      expect(await readyzBecomes(503)).toBe(503);
      expect((await limitsMetrics()).ready).toBe(0);
    } finally {
      relay.mode = 'pass';
      relay.resetAll();
      relay.thaw();
    }
    expect(await readyzBecomes(200)).toBe(200);
    expect((await limitsMetrics()).ready).toBe(1);
  });

  it('killed: every operation still answers in time, counted by the instance alone; back to ready once Redis returns', { timeout: 180_000 }, async () => {
    const before = (await limitsMetrics()).alone;
    await redis.kill();
    try {
      for (const r of await everyOperation()) {
        expect(r.status, r.operationId).toBe(expected(r.operationId));
      }
      expect(await readyzBecomes(503)).toBe(503);
      const during = await limitsMetrics(); // counted by the in-memory insurance limiters
      expect([during.alone > before, during.ready]).toEqual([true, 0]);
    } finally {
      await redis.start();
    }
    expect(await readyzBecomes(200)).toBe(200);
  });

  it('logged no unexpected error, left no unhandled rejection and no open socket', async () => {
    h.composition.deps.logger.flush();
    expect(unexpectedErrors(h.logs)).toEqual([]);
    await closeAll();
    const { unhandled, baseline, handles } = await leaks.check();
    expect(unhandled).toBe(0);
    expect(handles).toEqual(baseline);
  });
});
