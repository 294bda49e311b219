// One load run with wrk (C, one thread): for comparisons where the load generator's own CPU would decide the
// result on a small machine (WORKERS=2 against 1 on two cores: autocannon takes about a core by itself).
import { spawn, spawnSync } from 'node:child_process';
import { loaderCpuSeconds } from './cpu-usage.js';
import type { RequestSpec } from './endpoints.js';
import type { Measured } from './measure.js';

export function wrkPresent(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** wrk's latency figure ("812.00us", "1.20ms", "2.01s") in milliseconds. */
function ms(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'us' ? 1e-3 : m[2] === 's' ? 1e3 : 1);
}

/** GET requests only (wrk without a script sends one fixed request). */
export async function runWrk(o: { url: string; request: RequestSpec; connections: number; durationS: number }): Promise<Measured> {
  if (o.request.method !== 'GET') throw new Error('runWrk sends GET requests only');
  const args = ['-t1', `-c${o.connections}`, `-d${Math.max(1, Math.round(o.durationS))}s`, '--latency'];
  for (const [name, value] of Object.entries(o.request.headers ?? {})) args.push('-H', `${name}: ${value}`);
  args.push(new URL(o.request.path, o.url).href);
  const cpu0 = loaderCpuSeconds('children');
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}`))));
  });
  const total = /(\d+) requests in ([\d.]+)(ms|s)/.exec(out);
  if (!total) throw new Error(`unexpected wrk output: ${out.slice(0, 200)}`);
  const responses = Number(total[1]);
  const durationS = Number(total[2]) / (total[3] === 'ms' ? 1000 : 1);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((s, v) => s + Number(v), 0) : 0;
  return {
    rps: responses / durationS,
    p50: ms(/\s50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    responses,
    non2xx,
    errors,
    statusCodes: non2xx ? { 'non-2xx': non2xx } : {},
    durationS,
    times: new Float64Array(0),
    // wrk's CPU reaches our children's time when it is reaped, before 'close'; nothing else of ours exits meanwhile.
    loaderCpuUs: (loaderCpuSeconds('children') - cpu0) * 1e6,
  };
}
