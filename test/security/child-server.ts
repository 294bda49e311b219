// A real server process (src/main.ts) for tests that measure it from outside: its pid, port and RSS.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChildServer {
  child: ChildProcess;
  port: number;
  /** Everything the process wrote on stdout and stderr so far. */
  output: () => string;
  /** Resident set size from /proc/<pid>/status, in bytes. */
  rss: () => number;
  /** SIGTERM, then the exit code. */
  stop: () => Promise<number | null>;
}

export function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** Start src/main.ts on 127.0.0.1:0 with a fresh DATA_DIR; resolves once it prints its address. */
export function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vls-child-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      // Nothing leaves the machine: upstreams point at a closed loopback port.
      DNS_SERVERS: '127.0.0.1:9',
      PWNED_PASSWORDS_URL: 'http://127.0.0.1:9',
      PASSWORD_THREADS: '1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  void exit.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 45_000);
    const onData = () => {
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({
        child,
        port: Number(m[1]),
        output: () => out,
        rss: () => rssOf(child.pid!),
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exit;
        },
      });
    };
    child.stdout!.on('data', onData);
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}: ${out}`));
    });
  });
}
