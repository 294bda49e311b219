// The zxcvbn threads keep their own young generation when the service caps the main thread's on its command line.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POOL = new URL('../../src/adapters/password/pool.ts', import.meta.url).href;

/**
 * In a process started as the service is (`--max-semi-space-size=4`, here 16 to make the difference plain): start the
 * pool, then a thread with a 4 MB young-generation limit that churns short-lived objects; its new space, in MB.
 */
const CHILD = `
import { Worker } from 'node:worker_threads';
const { createStrengthEstimator } = await import(${JSON.stringify(POOL)});
const pool = createStrengthEstimator({ threads: 1 });
await pool.estimate('Tr0ub4dor&3');
const churn = "const get = process.getBuiltinModule; let keep = []; for (let i = 0; i < 400000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; } get('node:worker_threads').parentPort.postMessage(get('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);";
const bytes = await new Promise((resolve) => new Worker(churn, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } }).once('message', resolve));
await pool.close();
process.stdout.write(String(bytes / 2 ** 20));
`;

describe('worker threads under a command-line young-generation cap', () => {
  it('size their young generation from their resourceLimits once the pool has started, not from the flag', { timeout: 120_000 }, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=16', '--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: ROOT });
    // V8 would give the thread two 16 MB semi-spaces under the flag; its own limit gives it 4 MB in all.
    expect(Number(stdout)).toBeLessThanOrEqual(4);
  });
});
