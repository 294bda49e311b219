// Socket bookkeeping for fault fixtures: sockets and timers destroyed on close, loopback listeners, open-handle counts.
import { createHash } from 'node:crypto';
import net from 'node:net';
import { waitFor } from '../support/wait.js';

export const sha1Hex = (s: string): string => createHash('sha1').update(s, 'utf8').digest('hex').toUpperCase();

/** A socket set whose members are destroyed on close; timers too. */
export class Tracked {
  readonly sockets = new Set<net.Socket>();
  readonly timers = new Set<NodeJS.Timeout>();
  add(s: net.Socket): net.Socket {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
    return s;
  }
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }
  destroyAll(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of this.sockets) s.destroy();
  }
}

export function listenTcp(server: net.Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

export const closeServer = (server: net.Server) => new Promise<void>((r) => server.close(() => r()));

/** Open TCP and UDP handles of this process (sockets and listeners), by kind. */
function openNetHandles(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) if (/TCP|UDP/.test(r)) out[r] = (out[r] ?? 0) + 1;
  return out;
}

const total = (h: Record<string, number>) => Object.values(h).reduce((a, b) => a + b, 0);

/** Waits (bounded) until the open TCP/UDP handles are back to `baseline`; returns the last count seen. */
async function settleHandles(baseline: Record<string, number>): Promise<Record<string, number>> {
  await waitFor(() => total(openNetHandles()) <= total(baseline), { intervalMs: 50, what: 'the open handles back to the baseline' }).catch(() => undefined);
  return openNetHandles();
}

/**
 * A fault test's last word: the rejections no one handled from start() on, and the open sockets, once everything
 * is closed, against those open at start().
 */
export function watchLeaks() {
  let unhandled = 0;
  let baseline: Record<string, number> = {};
  const count = () => void unhandled++;
  return {
    start() {
      process.on('unhandledRejection', count);
      baseline = openNetHandles();
    },
    stop: () => void process.off('unhandledRejection', count),
    async check() {
      return { unhandled, baseline, handles: await settleHandles(baseline) };
    },
  };
}

/** The log lines of a failure the service did not expect (every fault should end in a documented one). */
export const unexpectedErrors = (logs: readonly string[]) => logs.filter((l) => l.includes('"unexpected error"') || l.includes('"unhandled error"'));
