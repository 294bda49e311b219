// Our worker threads keep their own young generation when the service caps the main thread's on its command line
// (ADR 0039): whichever thread starts first (the job store's, a list parser's, zxcvbn's), once workerScript() named it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = new URL('../../src/adapters/files/worker-script.ts', import.meta.url).href;
const POOL = new URL('../../src/adapters/password/pool.ts', import.meta.url).href;

/**
 * In a process started as the service is (`--max-semi-space-size=4`, here 16 to make the difference plain): `before`
 * runs, then a thread with a 4 MB young-generation limit churns short-lived objects; its new space, in MB.
 */
const child = (before: string) => `
import { Worker } from 'node:worker_threads';
${before}
const churn = "const get = process.getBuiltinModule; let keep = []; for (let i = 0; i < 400000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; } get('node:worker_threads').parentPort.postMessage(get('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);";
const bytes = await new Promise((resolve) => new Worker(churn, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } }).once('message', resolve));
process.stdout.write(String(bytes / 2 ** 20));
`;

async function newSpaceMb(before: string): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=16', '--import', 'tsx', '--input-type=module', '-e', child(before)], { cwd: ROOT });
  return Number(stdout);
}

describe('worker threads under a command-line young-generation cap', () => {
  it.each([
    ['a thread named by workerScript()', `(await import(${JSON.stringify(SCRIPT)})).workerScript(import.meta.url, 'any');`],
    ['a zxcvbn pool that has answered', `const pool = (await import(${JSON.stringify(POOL)})).createStrengthEstimator({ threads: 1 }); await pool.estimate('Tr0ub4dor&3'); await pool.close();`],
  ])('size their young generation from their resourceLimits after %s, not from the flag', { timeout: 120_000 }, async (_, before) => {
    // V8 would give the thread two 16 MB semi-spaces under the flag; its own limit gives it 4 MB in all.
    expect(await newSpaceMb(before)).toBeLessThanOrEqual(4);
  });

  it('would take the flag without it (the check above can fail)', { timeout: 120_000 }, async () => {
    expect(await newSpaceMb('')).toBeGreaterThan(4);
  });
});
