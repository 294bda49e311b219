// SMTP client side of a mailbox verification (RFC 5321 §3-4, RFC 3207 STARTTLS, RFC 1869 EHLO): greeting, EHLO/HELO,
// opportunistic STARTTLS, MAIL FROM, RCPT TO, QUIT. Never DATA or BDAT: no message is ever sent. The only SMTP socket code.
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient, SocksClientError } from 'socks';
import type { EndCause, SessionOutcome } from '../../domain/smtp-plan.js';
import { replyOf, type SmtpReply } from '../../domain/smtp-reply.js';

export interface SmtpSessionOptions {
  /** The MX host's address, already through the target guard (src/adapters/tls/target-guard.ts). */
  address: string;
  /** The MX host's name (TLS server name). */
  mxHost: string;
  port: number;
  heloName: string;
  mailFrom: string;
  /** Budget for the whole session with this address, connect to QUIT (SMTP_TIMEOUT_MS). */
  timeoutMs: number;
  /** Connect through this SOCKS5 proxy (SMTP_PROXY); null: directly. */
  proxy: { host: string; port: number } | null;
  /** Use STARTTLS when offered (false after a failed handshake with this host: a new plain session). */
  startTls: boolean;
  /** Announce SMTPUTF8 in MAIL FROM (RFC 6531) when the server offers it: some recipient has a non-ASCII local part. */
  utf8: boolean;
  /** Ends the session early (the verification's deadline, a client gone): QUIT, then the socket closed. */
  signal?: AbortSignal;
  /** The next recipient to ask, given the replies so far (in order) and whether the server offers SMTPUTF8; null ends the transaction. */
  next(replies: readonly SmtpReply[], server: { smtpUtf8: boolean }): string | null;
}

export type { SessionOutcome };

interface Reply extends SmtpReply {
  lines: string[];
}

/** A session ended under us: the peer closed or reset it, the session's time ran out, or the peer broke the protocol. */
class SessionEnded extends Error {
  constructor(readonly cause: EndCause) {
    super(cause);
  }
}

/**
 * One reply line (RFC 5321 §4.2: Reply-code [ ("-" / SP) textstring ], the code three digits 2-5, 0-5, 0-9); null for
 * anything else (`2501`, `25O`, a line without a code), which ends the session as a protocol error.
 */
function replyLine(line: string): { code: string; more: boolean; text: string } | null {
  const m = /^([2-5][0-5][0-9])(?:([ -])(.*))?$/.exec(line);
  return m ? { code: m[1], more: m[2] === '-', text: m[3] ?? '' } : null;
}

/** Longest reply line kept (RFC 5321 §4.5.3.1.5: 512 octets); a peer that sends more is not an SMTP server. */
const MAX_LINE = 4096;
/** Most lines in one reply (an EHLO answer lists a few dozen extensions at most). */
const MAX_LINES = 100;

/** Reads replies off one socket: multi-line replies (`250-...` then `250 ...`, RFC 5321 §4.2.1) as one. */
class ReplyReader {
  private buffer = '';
  private code: string | null = null;
  private lines: string[] = [];
  private waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void } | null = null;
  private ready: Reply[] = [];
  private ended: SessionEnded | null = null;

  constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', this.onData);
    socket.on('close', this.onClose);
    socket.on('error', this.onClose);
  }

  private readonly onData = (chunk: string): void => {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.line(line);
    }
    if (this.buffer.length > MAX_LINE) this.fail(new SessionEnded('closed'));
  };

  /** One line; the last of a reply (no hyphen) completes it. Every line of one reply carries one code (§4.2.1). */
  private line(line: string): void {
    const parsed = replyLine(line);
    if (!parsed || (this.code !== null && parsed.code !== this.code)) return this.fail(new SessionEnded('protocol'));
    if (this.lines.length >= MAX_LINES) return this.fail(new SessionEnded('closed'));
    this.lines.push(parsed.text);
    if (parsed.more) {
      this.code = parsed.code;
      return;
    }
    const reply: Reply = { ...replyOf(Number(parsed.code), this.lines), lines: this.lines };
    this.code = null;
    this.lines = [];
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.resolve(reply);
    } else this.ready.push(reply);
  }

  private readonly onClose = (): void => this.fail(new SessionEnded('closed'));

  fail(err: SessionEnded): void {
    this.ended ??= err;
    this.socket.destroy();
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w.reject(this.ended);
    }
  }

  read(): Promise<Reply> {
    const r = this.ready.shift();
    if (r) return Promise.resolve(r);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  /** Stop reading this socket (STARTTLS hands it to TLS). Whatever the peer sent after the 220 is dropped (RFC 3207 §4.2). */
  detach(): void {
    this.socket.off('data', this.onData);
    this.socket.off('close', this.onClose);
    this.socket.off('error', this.onClose);
    this.socket.on('error', () => undefined);
    this.buffer = '';
    this.code = null;
    this.lines = [];
    this.ready = [];
  }
}

/** One open TCP connection to the host, directly or through the SOCKS5 proxy (the `socks` library's client). */
async function open(o: SmtpSessionOptions, signal: AbortSignal): Promise<net.Socket> {
  if (o.proxy) {
    const connecting = SocksClient.createConnection({
      proxy: { host: o.proxy.host, port: o.proxy.port, type: 5 },
      command: 'connect',
      destination: { host: o.address, port: o.port },
      timeout: o.timeoutMs,
    }).then(({ socket }) => socket);
    // The library takes no signal: an abort (the deadline, a client gone) stops the wait, a late socket is closed.
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new SessionEnded('timeout')), { once: true }));
    connecting.then((socket) => signal.aborted && socket.destroy(), () => undefined);
    return Promise.race([connecting, aborted]);
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: o.address, port: o.port });
    const abort = (): void => {
      socket.destroy();
      reject(new SessionEnded('timeout'));
    };
    signal.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => {
      signal.removeEventListener('abort', abort);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err) => {
      signal.removeEventListener('abort', abort);
      reject(err);
    });
  });
}

/**
 * Why a connection did not open. Through SMTP_PROXY, `socks` rejects with a SocksClientError (its `name` stays
 * `Error`): the proxy down, its handshake failed or it refused the request (`proxy`); the destination refused or
 * unreachable beyond it (RFC 1928 §6 replies 3-6: `refused`, as a direct connection would be); its own timeout.
 */
function connectFailure(err: unknown, proxied: boolean): SessionOutcome {
  if (!proxied) return { kind: 'unreachable', cause: 'refused' };
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof SocksClientError && /timed out/i.test(message)) return { kind: 'unreachable', cause: 'timeout' };
  if (err instanceof SocksClientError && / - (?:NetworkUnreachable|HostUnreachable|ConnectionRefused|TTLExpired)$/.test(message)) {
    return { kind: 'unreachable', cause: 'refused' };
  }
  return { kind: 'unreachable', cause: 'proxy', detail: message };
}

/** The TLS session over an established plain one, or null when the handshake fails. */
function upgrade(socket: net.Socket, servername: string, signal: AbortSignal): Promise<tls.TLSSocket | null> {
  return new Promise((resolve) => {
    // The peer may have closed already (its bytes after the 220 ended the plain reader): no handshake to try.
    if (socket.destroyed || !socket.readable) return resolve(null);
    const secure = tls.connect({
      socket,
      servername: net.isIP(servername) ? undefined : servername,
      // Opportunistic STARTTLS (RFC 3207 §4.1, RFC 7435): MTAs do not verify MX certificates either (most are
      // self-signed or name another host), so an unverifiable one must not stop the verification; the session
      // carries no secret, and an attacker in the path could strip STARTTLS anyway.
      rejectUnauthorized: false,
    });
    const fail = (): void => {
      signal.removeEventListener('abort', fail);
      secure.destroy();
      resolve(null);
    };
    signal.addEventListener('abort', fail, { once: true });
    socket.once('close', fail);
    secure.once('secureConnect', () => {
      signal.removeEventListener('abort', fail);
      socket.removeListener('close', fail);
      secure.removeListener('error', fail);
      resolve(secure);
    });
    secure.once('error', fail);
  });
}

/** A command line; a CR or LF inside would start another command (RFC 5321 §2.3.8), so it is refused outright. */
function command(socket: net.Socket, text: string): void {
  if (/[\r\n]/.test(text)) throw new TypeError('an SMTP command holds a line break');
  socket.write(`${text}\r\n`);
}

/** The EHLO keywords (upper case), from the lines after the first of a 250 reply. */
const keywordsOf = (reply: Reply): Set<string> => new Set(reply.lines.slice(1).map((l) => l.split(' ')[0].toUpperCase()));

/** How long QUIT's 221 is waited for before the socket is closed anyway (the slot is held until then). */
const QUIT_GRACE_MS = 1000;

/** QUIT (RFC 5321 §4.1.1.10), then the socket closed when the server closes it or after QUIT_GRACE_MS, whichever first. */
function quit(socket: net.Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, QUIT_GRACE_MS);
    socket.once('close', done);
    if (socket.writable) socket.end('QUIT\r\n');
    else done();
  });
}

/** One plain or TLS connection being talked to, and where the dialogue is. */
interface Dialogue {
  socket: net.Socket;
  reader: ReplyReader;
  secure: boolean;
  stage: 'greeting' | 'helo' | 'mail' | 'rcpt';
  replies: SmtpReply[];
}

function say(d: Dialogue, text: string): Promise<Reply> {
  command(d.socket, text);
  return d.reader.read();
}

/** The greeting and EHLO (HELO when EHLO is refused), STARTTLS when offered and wanted; the EHLO keywords, or a refusal. */
async function hello(d: Dialogue, o: SmtpSessionOptions, signal: AbortSignal): Promise<Set<string> | SessionOutcome> {
  const greeting = await d.reader.read();
  if (greeting.code !== 220) return { kind: 'refused', stage: 'greeting', reply: greeting, tls: false };
  d.stage = 'helo';
  let ehlo = await say(d, `EHLO ${o.heloName}`);
  const keywords = ehlo.code === 250 ? keywordsOf(ehlo) : new Set<string>();
  if (ehlo.code !== 250 && ehlo.code !== 421) ehlo = await say(d, `HELO ${o.heloName}`);
  if (ehlo.code !== 250) return { kind: 'refused', stage: 'helo', reply: ehlo, tls: false };
  if (!o.startTls || !keywords.has('STARTTLS')) return keywords;
  const go = await say(d, 'STARTTLS');
  if (go.code !== 220) return keywords;
  d.reader.detach();
  const upgraded = await upgrade(d.socket, o.mxHost, signal);
  if (upgraded === null) {
    d.socket.destroy();
    return signal.aborted ? { kind: 'unreachable', cause: 'timeout' } : { kind: 'tls_failed' };
  }
  d.socket = upgraded;
  d.reader = new ReplyReader(upgraded);
  d.secure = true;
  // RFC 3207 §4.2: everything learnt before the handshake is forgotten; greet again.
  ehlo = await say(d, `EHLO ${o.heloName}`);
  if (ehlo.code !== 250) return { kind: 'refused', stage: 'helo', reply: ehlo, tls: true };
  return keywordsOf(ehlo);
}

/** MAIL FROM, then RCPT TO for each recipient `next` gives, then QUIT. */
async function transaction(d: Dialogue, o: SmtpSessionOptions, keywords: Set<string>): Promise<SessionOutcome> {
  d.stage = 'mail';
  const smtpUtf8 = keywords.has('SMTPUTF8');
  const mail = await say(d, `MAIL FROM:<${o.mailFrom}>${o.utf8 && smtpUtf8 ? ' SMTPUTF8' : ''}`);
  if (mail.code !== 250) return { kind: 'refused', stage: 'mail', reply: mail, tls: d.secure };
  d.stage = 'rcpt';
  for (let rcpt = o.next(d.replies, { smtpUtf8 }); rcpt !== null; rcpt = o.next(d.replies, { smtpUtf8 })) {
    const reply = await say(d, `RCPT TO:<${rcpt}>`);
    d.replies.push({ code: reply.code, enhancedCode: reply.enhancedCode, text: reply.text });
    // 421: the server is closing the channel (RFC 5321 §3.8); nothing more can be asked.
    if (reply.code === 421) return { kind: 'answered', replies: d.replies, tls: d.secure, cut: 'closed' };
  }
  return { kind: 'answered', replies: d.replies, tls: d.secure, cut: null };
}

/**
 * One session with one server address. Resolves with what the server said; rejects only on a programming error. Ends
 * at `timeoutMs` or when `signal` aborts (the verification's deadline, a client gone): QUIT is sent and the socket
 * closed within QUIT_GRACE_MS, as after a normal end; the slot is the caller's to give back after that.
 */
export async function runSmtpSession(o: SmtpSessionOptions): Promise<SessionOutcome> {
  const controller = new AbortController();
  const signal = o.signal ? AbortSignal.any([controller.signal, o.signal]) : controller.signal;
  let d: Dialogue | null = null;
  const stop = (): void => {
    if (d && d.socket.writable) d.socket.write('QUIT\r\n');
    d?.reader.fail(new SessionEnded('timeout'));
  };
  signal.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(() => controller.abort(), o.timeoutMs);
  try {
    if (signal.aborted) return { kind: 'unreachable', cause: 'timeout' };
    const socket = await open(o, signal).catch((err: unknown) => err as Error);
    if (socket instanceof Error || signal.aborted) {
      if (!(socket instanceof Error)) socket.destroy();
      return signal.aborted ? { kind: 'unreachable', cause: 'timeout' } : connectFailure(socket, o.proxy !== null);
    }
    d = { socket, reader: new ReplyReader(socket), secure: false, stage: 'greeting', replies: [] };
    const keywords = await hello(d, o, signal);
    if (!(keywords instanceof Set)) return keywords;
    return await transaction(d, o, keywords);
  } catch (err) {
    if (!(err instanceof SessionEnded) || d === null) throw err;
    if (d.stage === 'rcpt') return { kind: 'answered', replies: d.replies, tls: d.secure, cut: err.cause };
    return { kind: 'unreachable', cause: err.cause };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    if (d) await quit(d.socket);
  }
}
