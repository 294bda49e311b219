// runLoad in a child process: a second load beside another gets its own process and event loop, so neither
// load generator's callbacks delay the other's timings (the open-loop BIC beside the password load).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runLoad, type LoadOptions, type Measured } from './measure.js';

const SELF = fileURLToPath(import.meta.url);

const STARTED = 'load-child: started\n';

/** `started` is called once the child's load begins (after its own start-up, which takes CPU for a second or so). */
export function runLoadInChild(o: LoadOptions, started: () => void = () => undefined): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SELF, JSON.stringify(o)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      if (text.includes(STARTED)) started();
      const rest = text.replace(STARTED, '');
      if (rest) process.stderr.write(rest);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load child exited ${code}`));
      const m = JSON.parse(out) as Omit<Measured, 'times'> & { times: number[] };
      resolve({ ...m, times: Float64Array.from(m.times) });
    });
  });
}

if (process.argv[1] === SELF) {
  process.stderr.write(STARTED);
  const m = await runLoad(JSON.parse(process.argv[2]) as LoadOptions);
  process.stdout.write(JSON.stringify({ ...m, times: Array.from(m.times) }));
}
