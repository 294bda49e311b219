// SMTP client side of a mailbox verification (RFC 5321 §3-4, RFC 3207 STARTTLS, RFC 1869 EHLO): greeting, EHLO/HELO,
// opportunistic STARTTLS, MAIL FROM, RCPT TO, QUIT. Never DATA or BDAT: no message is ever sent. The only SMTP socket code.
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient, SocksClientError } from 'socks';
import { replyOf, type SmtpReply } from '../../domain/smtp-reply.js';

export interface SmtpSessionOptions {
  /** The MX host's address, already through the target guard (src/adapters/tls/target-guard.ts). */
  address: string;
  /** The MX host's name (TLS server name). */
  mxHost: string;
  port: number;
  heloName: string;
  mailFrom: string;
  /** Budget for the whole session, connect to QUIT. */
  timeoutMs: number;
  /** Connect through this SOCKS5 proxy (SMTP_PROXY); null: directly. */
  proxy: { host: string; port: number } | null;
  /** Use STARTTLS when offered (false after a failed handshake with this host: a new plain session). */
  startTls: boolean;
  /** Announce SMTPUTF8 in MAIL FROM (RFC 6531) when the server offers it: some recipient has a non-ASCII local part. */
  utf8: boolean;
  /** The next recipient to ask, given the replies so far (in order); null ends the transaction. */
  next(replies: readonly SmtpReply[]): string | null;
}

export type SessionOutcome =
  /**
   * No verdict from this host: it refused or reset the connection, closed it, did not answer in time, or broke RFC 5321
   * §4.2 (`protocol`); or the SOCKS proxy (SMTP_PROXY) is down or refused to connect (`proxy`, its error in `detail`).
   */
  | { kind: 'unreachable'; cause: EndCause | 'refused' | 'proxy'; detail?: string }
  /** The server refused the session before any recipient: at the greeting, EHLO/HELO or MAIL FROM. */
  | { kind: 'refused'; stage: 'greeting' | 'helo' | 'mail'; reply: SmtpReply; tls: boolean }
  /** The STARTTLS handshake failed: the caller may try again without it. */
  | { kind: 'tls_failed' }
  /** Recipients answered, in the order asked; `cut` when the session ended before `next` said it was done. */
  | { kind: 'answered'; replies: SmtpReply[]; tls: boolean; cut: EndCause | null };

/** Why a session ended before its end: the peer closed it, the time ran out, or the peer's replies broke RFC 5321 §4.2. */
type EndCause = 'closed' | 'timeout' | 'protocol';

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
    const { socket } = await SocksClient.createConnection({
      proxy: { host: o.proxy.host, port: o.proxy.port, type: 5 },
      command: 'connect',
      destination: { host: o.address, port: o.port },
      timeout: o.timeoutMs,
    });
    if (signal.aborted) socket.destroy();
    return socket;
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

/** One session with one host. Resolves with what the host said; rejects only on a programming error. */
export async function runSmtpSession(o: SmtpSessionOptions): Promise<SessionOutcome> {
  const controller = new AbortController();
  let reader: ReplyReader | null = null;
  const timer = setTimeout(() => {
    controller.abort();
    reader?.fail(new SessionEnded('timeout'));
  }, o.timeoutMs);
  let socket: net.Socket;
  try {
    socket = await open(o, controller.signal);
  } catch (err) {
    clearTimeout(timer);
    return controller.signal.aborted ? { kind: 'unreachable', cause: 'timeout' } : connectFailure(err, o.proxy !== null);
  }
  if (controller.signal.aborted) {
    clearTimeout(timer);
    socket.destroy();
    return { kind: 'unreachable', cause: 'timeout' };
  }
  reader = new ReplyReader(socket);
  let secure = false;
  let stage: 'greeting' | 'helo' | 'mail' | 'rcpt' = 'greeting';
  const replies: SmtpReply[] = [];
  const say = async (text: string): Promise<Reply> => {
    command(socket, text);
    return reader!.read();
  };
  try {
    const greeting = await reader.read();
    if (greeting.code !== 220) return { kind: 'refused', stage: 'greeting', reply: greeting, tls: false };
    stage = 'helo';
    let hello = await say(`EHLO ${o.heloName}`);
    let keywords = hello.code === 250 ? keywordsOf(hello) : new Set<string>();
    if (hello.code !== 250 && hello.code !== 421) hello = await say(`HELO ${o.heloName}`);
    if (hello.code !== 250) return { kind: 'refused', stage: 'helo', reply: hello, tls: false };
    if (o.startTls && keywords.has('STARTTLS')) {
      const go = await say('STARTTLS');
      if (go.code === 220) {
        reader.detach();
        const upgraded = await upgrade(socket, o.mxHost, controller.signal);
        if (upgraded === null) {
          socket.destroy();
          return controller.signal.aborted ? { kind: 'unreachable', cause: 'timeout' } : { kind: 'tls_failed' };
        }
        socket = upgraded;
        reader = new ReplyReader(socket);
        secure = true;
        // RFC 3207 §4.2: everything learnt before the handshake is forgotten; greet again.
        hello = await say(`EHLO ${o.heloName}`);
        if (hello.code !== 250) return { kind: 'refused', stage: 'helo', reply: hello, tls: secure };
        keywords = keywordsOf(hello);
      }
    }
    stage = 'mail';
    const mail = await say(`MAIL FROM:<${o.mailFrom}>${o.utf8 && keywords.has('SMTPUTF8') ? ' SMTPUTF8' : ''}`);
    if (mail.code !== 250) return { kind: 'refused', stage: 'mail', reply: mail, tls: secure };
    stage = 'rcpt';
    for (let rcpt = o.next(replies); rcpt !== null; rcpt = o.next(replies)) {
      const reply = await say(`RCPT TO:<${rcpt}>`);
      replies.push({ code: reply.code, enhancedCode: reply.enhancedCode, text: reply.text });
      // 421: the server is closing the channel (RFC 5321 §3.8); nothing more can be asked.
      if (reply.code === 421) return { kind: 'answered', replies, tls: secure, cut: 'closed' };
    }
    // QUIT ends the transaction without a message (RFC 5321 §4.1.1.10); its answer is not waited for past the budget.
    command(socket, 'QUIT');
    await reader.read().catch(() => undefined);
    return { kind: 'answered', replies, tls: secure, cut: null };
  } catch (err) {
    if (!(err instanceof SessionEnded)) throw err;
    if (stage === 'rcpt') return { kind: 'answered', replies, tls: secure, cut: err.cause };
    return { kind: 'unreachable', cause: err.cause };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
