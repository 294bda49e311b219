// Real SMTP servers on loopback for mailbox verification tests: Nodemailer's smtp-server, one per 127.0.0.x address, all
// on one port (the verifier has one SMTP_PORT), each with its own behaviour and a record of every session.
//
//   const smtp = await startSmtpFixture({ '127.0.0.10': { users: ['alice'] }, '127.0.0.11': { silent: true } });
//   // SMTP_PORT = smtp.port; DNS: mx.known.test A 127.0.0.10 ...
//   smtp.sessions('127.0.0.10')  // [{ helo, mailFrom, rcpts, data, tls }]
import net from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { issue } from './tls-fixtures.js';

export interface Reply {
  code: number;
  /** The text, an enhanced status code first when the scenario has one ("5.1.1 no such user"). */
  text: string;
}

export interface SmtpBehaviour {
  /** Local parts accepted by the default RCPT rule; others get 550 5.1.1. */
  users?: string[];
  /** Answer RCPT TO instead of the default rule: `index` counts the RCPTs of this session from 0; null accepts. */
  rcpt?: (local: string, index: number) => Reply | null;
  /** Refuse the session at the greeting with this reply. */
  greeting?: Reply;
  /** Accept the connection and never say anything. */
  silent?: boolean;
  /** Offer STARTTLS (a self-signed certificate, as many MX hosts have). */
  starttls?: boolean;
  /** Offer STARTTLS, answer 220 to it, then break the handshake (garbage, close); a plain session works. */
  brokenTls?: boolean;
  /**
   * Answer RCPT TO with these lines exactly, CRLF after each (a hand-written server: multi-line replies as real servers
   * send them, and replies that break RFC 5321 §4.2); null accepts.
   */
  rawRcpt?: (local: string) => string[] | null;
  /** Answer each RCPT this many milliseconds late, as a distant server does (the bench; tests leave it 0). */
  rcptDelayMs?: number;
  /** Do not offer SMTPUTF8 (RFC 6531) in the EHLO answer. */
  noSmtpUtf8?: boolean;
}

export interface RecordedSession {
  /** The name given in EHLO/HELO. */
  helo: string | null;
  mailFrom: string | null;
  /** RCPT TO addresses, in the order sent. */
  rcpts: string[];
  /** DATA (or BDAT) was sent. */
  data: boolean;
  tls: boolean;
  /** The client sent QUIT. */
  quit: boolean;
  /** The connection is closed. */
  closed: boolean;
}

export interface SmtpFixture {
  port: number;
  /** Sessions of one host, in the order they opened (a live array). */
  sessions(ip: string): RecordedSession[];
  /** The most sessions one host had open at the same time. */
  maxConcurrent(ip: string): number;
  /** Forget the recorded sessions of every host. */
  reset(): void;
  close(): Promise<void>;
}

const CERT = issue({ subject: [['CN', 'mx.fixture.test']], dnsNames: ['mx.fixture.test'] });

const replyError = (r: Reply): Error => Object.assign(new Error(r.text), { responseCode: r.code });

interface Host {
  listening: net.Server | SMTPServer;
  /** The hand-written servers' open sockets, destroyed at close. */
  sockets: Set<net.Socket>;
  sessions: RecordedSession[];
  open: number;
  max: number;
}

function listenOn(server: net.Server, ip: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve((server.address() as net.AddressInfo).port));
  });
}

/**
 * A hand-written server: one whose STARTTLS handshake always fails (smtp-server completes every handshake it starts),
 * or one writing raw RCPT replies (smtp-server writes one line per reply and cleans its text).
 */
function handWrittenServer(b: SmtpBehaviour, host: Host): net.Server {
  return net.createServer((socket) => {
    const rec: RecordedSession = { helo: null, mailFrom: null, rcpts: [], data: false, tls: false, quit: false, closed: false };
    host.sessions.push(rec);
    host.open++;
    host.max = Math.max(host.max, host.open);
    socket.on('close', () => {
      host.open--;
      rec.closed = true;
    });
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    socket.write('220 mx.broken.test ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') {
          rec.helo = line.slice(5).trim();
          socket.write(b.brokenTls ? '250-mx.broken.test\r\n250 STARTTLS\r\n' : '250 mx.raw.test\r\n');
        } else if (verb === 'STARTTLS') {
          socket.write('220 2.0.0 go ahead\r\n');
          socket.end('this is not a TLS record\r\n');
        } else if (verb === 'MAIL') {
          rec.mailFrom = /<(.*)>/.exec(line)?.[1] ?? '';
          socket.write('250 2.1.0 ok\r\n');
        } else if (verb === 'RCPT') {
          const address = /<(.*)>/.exec(line)?.[1] ?? '';
          rec.rcpts.push(address);
          const raw = b.rawRcpt?.(address.slice(0, address.lastIndexOf('@'))) ?? null;
          socket.write(raw ? raw.map((l) => `${l}\r\n`).join('') : '250 2.1.5 ok\r\n');
        } else if (verb === 'DATA' || verb === 'BDAT') {
          rec.data = true;
          socket.write('554 5.5.1 no\r\n');
        } else if (verb === 'QUIT') {
          rec.quit = true;
          socket.end('221 2.0.0 bye\r\n');
        }
        else socket.write('502 5.5.2 unknown command\r\n');
      }
    });
  });
}

/** Marks the session of each connection that sends QUIT (smtp-server answers QUIT itself, with no hook). */
function tapQuit(server: SMTPServer, byPort: Map<number, RecordedSession>): void {
  server.server.on('connection', (socket: net.Socket) => {
    const port = socket.remotePort!;
    socket.on('data', (chunk: Buffer) => {
      const rec = byPort.get(port);
      if (rec && /^QUIT\r?$/im.test(chunk.toString('latin1'))) rec.quit = true;
    });
  });
}

function smtpServer(b: SmtpBehaviour, host: Host): SMTPServer {
  const bySession = new Map<string, RecordedSession>();
  const byPort = new Map<number, RecordedSession>();
  const recordOf = (session: SMTPServerSession): RecordedSession => {
    let rec = bySession.get(session.id);
    if (!rec) {
      rec = { helo: null, mailFrom: null, rcpts: [], data: false, tls: false, quit: false, closed: false };
      bySession.set(session.id, rec);
      host.sessions.push(rec);
    }
    return rec;
  };
  const server = new SMTPServer({
    name: 'mx.fixture.test',
    logger: false,
    authOptional: true,
    disableReverseLookup: true,
    // The scenarios write their own enhanced codes into the reply text.
    hideENHANCEDSTATUSCODES: true,
    hideSMTPUTF8: b.noSmtpUtf8 === true,
    disabledCommands: b.starttls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    key: CERT.keyPem,
    cert: CERT.certPem,
    onConnect(session, callback) {
      byPort.set(session.remotePort, recordOf(session));
      host.open++;
      host.max = Math.max(host.max, host.open);
      callback(b.greeting ? replyError(b.greeting) : null);
    },
    onClose(session) {
      host.open--;
      recordOf(session).closed = true;
    },
    onMailFrom(address, session, callback) {
      const rec = recordOf(session);
      rec.helo = session.hostNameAppearsAs || null;
      rec.mailFrom = address.address;
      rec.tls = session.secure;
      callback();
    },
    onRcptTo(address, session, callback) {
      const rec = recordOf(session);
      const index = rec.rcpts.length;
      rec.rcpts.push(address.address);
      const local = address.address.slice(0, address.address.lastIndexOf('@'));
      const reply = b.rcpt ? b.rcpt(local, index) : (b.users ?? []).includes(local) ? null : { code: 550, text: '5.1.1 no such user here' };
      const answer = () => callback(reply ? replyError(reply) : null);
      if (b.rcptDelayMs) setTimeout(answer, b.rcptDelayMs);
      else answer();
    },
    onData(stream, session, callback) {
      recordOf(session).data = true;
      stream.resume();
      stream.on('end', () => callback(replyError({ code: 554, text: '5.5.1 a verifier must not send data' })));
    },
  });
  tapQuit(server, byPort);
  // smtp-server re-emits a connection's socket errors on the server: a client killed mid-session (the SIGKILL tests)
  // resets its connection, which is the fixture's normal life, not an uncaught exception of the test process.
  server.on('error', () => undefined);
  return server;
}

export async function startSmtpFixture(hosts: Record<string, SmtpBehaviour>): Promise<SmtpFixture> {
  const running = new Map<string, Host>();
  let port = 0;
  for (const [ip, b] of Object.entries(hosts)) {
    const host: Host = { listening: null as never, sockets: new Set(), sessions: [], open: 0, max: 0 };
    if (b.silent || b.brokenTls || b.rawRcpt) {
      const server = b.silent
        ? net.createServer((socket) => {
            const rec: RecordedSession = { helo: null, mailFrom: null, rcpts: [], data: false, tls: false, quit: false, closed: false };
            host.sessions.push(rec);
            socket.on('error', () => undefined);
            socket.on('data', (chunk) => (rec.quit ||= /^QUIT\r?$/im.test(chunk.toString('latin1'))));
            socket.on('close', () => (rec.closed = true));
          })
        : handWrittenServer(b, host);
      server.on('connection', (socket) => {
        host.sockets.add(socket);
        socket.on('close', () => host.sockets.delete(socket));
      });
      host.listening = server;
      port = await listenOn(server, ip, port);
    } else {
      const server = smtpServer(b, host);
      host.listening = server;
      port = await listenOn(server.server, ip, port);
    }
    running.set(ip, host);
  }
  const hostOf = (ip: string): Host => {
    const h = running.get(ip);
    if (!h) throw new Error(`no SMTP fixture host at ${ip}`);
    return h;
  };
  return {
    port,
    sessions: (ip) => hostOf(ip).sessions,
    maxConcurrent: (ip) => hostOf(ip).max,
    reset() {
      for (const h of running.values()) {
        h.sessions.length = 0;
        h.max = h.open;
      }
    },
    async close() {
      await Promise.all(
        [...running.values()].map(
          (h) =>
            new Promise<void>((resolve) => {
              if (h.listening instanceof SMTPServer) h.listening.close(() => resolve());
              else {
                h.listening.close(() => resolve());
                for (const socket of h.sockets) socket.destroy();
              }
            }),
        ),
      );
    },
  };
}

/** The settings that turn SMTP verification on against the fixture: the test DNS server, loopback targets allowed. */
export function smtpCheckEnv(dnsPort: number, smtpPort: number): Record<string, string> {
  return {
    DNS_SERVERS: `127.0.0.1:${dnsPort}`,
    ALLOW_PRIVATE_TARGETS: 'true',
    SMTP_CHECK: 'on',
    SMTP_HELO_NAME: 'verifier.example.net',
    SMTP_MAIL_FROM: 'check@verifier.example.net',
    SMTP_PORT: String(smtpPort),
  };
}
