// A k-anonymity range API on 127.0.0.1 (GET /range/{5 hex}, HTTP/1.1 written by hand) that can hang, reset, answer garbage, redirect or answer late.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { closeServer, listenTcp, sha1Hex, Tracked } from './fault-net.js';

export type RangeFault = 'ok' | 'hang' | 'reset' | 'garbage' | 'bad-rows' | 'slow' | 'slow-body' | 'redirect';

export interface FaultyRange {
  baseUrl: string;
  mode: RangeFault;
  delayMs: number;
  /** Where 'redirect' points (a full URL prefix; `/range/PREFIX` is appended), and with which status. */
  redirectTo: string;
  redirectStatus: 301 | 302 | 303 | 307 | 308;
  /** Request lines received, e.g. `GET /range/5BAA6`. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A k-anonymity range API (`GET /range/{5 hex}` → `SUFFIX:COUNT` lines, padded with count-0 rows) that can
 * misbehave. `breached` maps passwords to their breach counts.
 */
export async function startFaultyRange(breached: Record<string, number> = {}): Promise<FaultyRange> {
  const tracked = new Tracked();
  const requests: string[] = [];
  const state = { mode: 'ok' as RangeFault, delayMs: 200, redirectTo: 'http://127.0.0.1:9', redirectStatus: 302 as FaultyRange['redirectStatus'] };

  const rangeBody = (prefix: string): string => {
    const rows: string[] = [];
    for (const [pw, n] of Object.entries(breached)) {
      const h = sha1Hex(pw);
      if (h.startsWith(prefix)) rows.push(`${h.slice(5)}:${n}`);
    }
    for (let i = 0; i < 20; i++) rows.push(`${sha1Hex(`${prefix}${i}`).slice(5)}:0`);
    return rows.join('\r\n');
  };
  const http = (status: string, body: string, extra = '') =>
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;

  const server = net.createServer((sock) => {
    tracked.add(sock);
    let head = '';
    sock.on('data', (d) => {
      if (head.includes('\r\n\r\n')) return;
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const line = head.split('\r\n')[0];
      requests.push(line.replace(/ HTTP\/1\.[01]$/, ''));
      const prefix = /^GET \/range\/([0-9A-F]{5}) /.exec(line)?.[1] ?? '00000';
      const mode = state.mode;
      switch (mode) {
        case 'hang':
          return;
        case 'reset':
          sock.resetAndDestroy();
          return;
        case 'garbage':
          sock.end(randomBytes(64));
          return;
        case 'bad-rows':
          sock.end(http('200 OK', 'this is not:a range\r\n<html>oops</html>'));
          return;
        case 'redirect':
          sock.end(http(`${state.redirectStatus} Moved`, '', `Location: ${state.redirectTo}/range/${prefix}\r\n`));
          return;
        case 'slow':
          tracked.later(state.delayMs, () => sock.end(http('200 OK', rangeBody(prefix))));
          return;
        case 'slow-body': {
          // Headers at once, then the body one row per delayMs: the whole answer takes too long.
          const body = rangeBody(prefix);
          sock.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`);
          const rows = body.split(/(?<=\n)/);
          const drip = (i: number) => {
            if (sock.destroyed) return;
            if (i >= rows.length) return void sock.end();
            sock.write(rows[i]);
            tracked.later(state.delayMs, () => drip(i + 1));
          };
          drip(0);
          return;
        }
        default:
          sock.end(http('200 OK', rangeBody(prefix)));
      }
    });
  });
  const port = await listenTcp(server);
  // The fault settings are the returned object's own fields: tests change them on it.
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      tracked.destroyAll();
      await closeServer(server);
    },
  });
}
