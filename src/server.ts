// HTTP server lifecycle (RFC 9112): bounded timeouts, header sizes and pipelining; a drain on Node's own close mechanisms.
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, methodNotAllowed } from './errors.js';
import { errorReply } from './error-answers.js';
import { newRequestId, replyHeaders, writeErrorReply } from './http/reply-writer.js';

export interface ServerLimits {
  /** Whole request (headers + body) must arrive within this. */
  requestTimeoutMs: number;
  /** Headers must arrive within this (cuts slow-loris connections, and connections that send nothing). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node adds a 1 s grace). */
  keepAliveTimeoutMs: number;
  /** Request line plus headers, in bytes; beyond it the answer is 431. */
  maxHeaderSize: number;
  /** Header lines a request may carry; one more is answered 431 (Node would otherwise drop the rest silently). */
  maxHeadersCount: number;
  /**
   * How often Node checks requestTimeout and headersTimeout. Node's default is 30 s, which would let a
   * slow-loris connection live up to 30 s past headersTimeout.
   */
  connectionsCheckingIntervalMs: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
  maxHeadersCount: 100,
  connectionsCheckingIntervalMs: 1_000,
};

/**
 * Requests Node rejects before the app sees them (malformed HTTP, headers over maxHeaderSize, timeouts)
 * still answer ErrorInfo JSON; nothing of the request is echoed.
 */
function clientErrorOf(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'VALIDATION_ERROR', 'request line and headers are too large');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError(408, 'VALIDATION_ERROR', 'the request did not arrive in time');
  return new ApiError(400, 'INVALID_FORMAT', 'malformed HTTP request');
}

/** A refusal answered before the app sees the request (ErrorInfo, connection closed); nothing of it is echoed. */
function refuse(req: IncomingMessage, res: ServerResponse, error: ApiError): void {
  const path = (req.url ?? '').split('?')[0];
  writeErrorReply(res, req.method, error, path.startsWith('/') ? path : '', true);
}

/** RFC 3986 §3.2.2-3.2.3 host (IP-literal, IPv4 or reg-name) and optional port; empty is allowed (RFC 9112 §3.2). */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d*)?$/;

function hostLines(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') n++;
  return n;
}

/**
 * The checks Node would otherwise answer itself with an empty body: more header lines than allowed (Node drops
 * the rest silently), and an HTTP/1.1 request without Host (RFC 9112 §3.2: 400). Null when the request may pass.
 */
function refusal(req: IncomingMessage, maxHeadersCount: number): ApiError | null {
  if (req.rawHeaders.length > 2 * maxHeadersCount) return new ApiError(431, 'VALIDATION_ERROR', `more than ${maxHeadersCount} header lines`);
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new ApiError(400, 'INVALID_FORMAT', 'an HTTP/1.1 request must carry a Host header', { details: [{ field: 'Host', message: 'is required' }] });
  }
  // RFC 9112 §3.2: more than one Host line, or one that is not uri-host[:port], is a 400. Node keeps the first
  // line in req.headers and drops the others unseen.
  if (req.headers.host !== undefined && (hostLines(req.rawHeaders) > 1 || !HOST_VALUE.test(req.headers.host))) {
    return new ApiError(400, 'INVALID_FORMAT', 'a request must carry one valid Host header', { details: [{ field: 'Host', message: 'must be given once, as host[:port]' }] });
  }
  return null;
}

/**
 * ErrorInfo straight on the socket, then close: for requests Node never hands to a request listener. The same head
 * and body as any API answer (replyHeaders), written as HTTP/1.1 text.
 */
function writeRaw(socket: Duplex, error: ApiError): void {
  const requestId = newRequestId();
  const reply = errorReply(error, '', requestId);
  const payload = JSON.stringify(reply.body);
  let head = `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status]}\r\n`;
  for (const [name, value] of Object.entries(replyHeaders(reply, requestId, undefined, true, payload))) head += `${name}: ${value}\r\n`;
  socket.write(`${head}\r\n${payload}`);
  socket.destroy();
}

/** The oldest response on a connection not yet finished: the one being written (HTTP/1.1 answers in order). */
const inFlight = (socket: Duplex): ServerResponse | undefined => pipelines.get(socket as Socket)?.unanswered[0];

/**
 * Runs `then` once the responses to requests that arrived whole have been written (HTTP/1.1 answers in order).
 * A request the error cut short (a timeout, a malformed body) is not waited for: the refusal is its answer.
 */
function afterCompleteRequests(socket: Duplex, then: () => void): void {
  const pending = inFlight(socket);
  if (!pending || pending.writableFinished || !pending.req.complete) return then();
  // Node hands the connection to the next queued response after this one closes; look again a turn later.
  pending.once('close', () => setImmediate(() => afterCompleteRequests(socket, then)));
}

/** Connections already refused: the parser reports again on every later chunk. */
const refusedSockets = new WeakSet<Duplex>();

function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (refusedSockets.has(socket)) return;
  refusedSockets.add(socket);
  if (err.code === 'ECONNRESET') return void socket.destroy();
  afterCompleteRequests(socket, () => {
    // Like Node's default: no refusal once a response has started (its bytes would be corrupted); just close.
    const started = inFlight(socket);
    if (!socket.writable || (started && started.headersSent && !started.writableFinished)) return void socket.destroy();
    writeRaw(socket, clientErrorOf(err.code));
  });
}

/** CONNECT (RFC 9110 §9.3.6) asks for a tunnel; this is not a proxy. Node would close without a word. */
function onConnect(req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  writeRaw(socket, methodNotAllowed(req.method ?? 'CONNECT', ['GET', 'HEAD', 'POST'], 'here: this server is not a proxy'));
}

/**
 * Requests one connection may have waiting for their answers (pipelined, RFC 9112 §9.3.2). The next one is
 * refused with 503 ErrorInfo and `Connection: close`: the connection closes after answering the requests ahead
 * of it, and the client sends the unanswered rest again on a new connection (RFC 9112 §9.3.1). Browsers do not
 * pipeline; clients that do keep a handful in flight.
 */
export const MAX_PIPELINED_REQUESTS = 16;

interface ServerState {
  /** Connections accepted since start. */
  accepted: number;
  /** Connections that have not sent a request yet, with when they were accepted. Each leaves on its 'close'. */
  fresh: Map<Socket, number>;
}

const states = new WeakMap<Server, ServerState>();

/** Per connection; goes with the socket (nothing else holds it, whether or not its responses ever finish). */
interface Pipeline {
  /** Responses to the requests handed to the app and not finished yet, oldest first. */
  unanswered: ServerResponse[];
  /** A refusal with `Connection: close` was queued: nothing after it will be sent. */
  closing: boolean;
}

const pipelines = new WeakMap<Socket, Pipeline>();

function pipelineOf(socket: Socket): Pipeline {
  let p = pipelines.get(socket);
  if (p === undefined) pipelines.set(socket, (p = { unanswered: [], closing: false }));
  return p;
}

/** A finished response leaves its connection's queue: one listener for every response, not a closure per request. */
function onResponseFinish(this: ServerResponse): void {
  const p = pipelines.get(this.req.socket as Socket);
  const i = p ? p.unanswered.indexOf(this) : -1;
  if (i >= 0) p!.unanswered.splice(i, 1);
}

function tooManyPipelined(p: Pipeline): ApiError | null {
  if (p.unanswered.length < MAX_PIPELINED_REQUESTS) return null;
  return new ApiError(503, 'SERVICE_UNAVAILABLE', `more than ${MAX_PIPELINED_REQUESTS} pipelined requests wait on this connection: send the rest on a new one`);
}

export function createHttpServer(app: { callback(): RequestListener }, overrides: Partial<ServerLimits> = {}): Server {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  const handle = app.callback();
  const state: ServerState = { accepted: 0, fresh: new Map() };
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderSize,
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
      // Checked in refusal() so that the 400 is ErrorInfo like every other answer.
      requireHostHeader: false,
      // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): Node hands it over already
      // ended, without the 'end' and 'close' events nothing here listens for (Node 24.12+; docs/adr/0035).
      optimizeEmptyRequests: true,
    },
    (req, res) => {
      const socket = req.socket as Socket;
      state.fresh.delete(socket);
      const p = pipelineOf(socket);
      // Behind a refusal nothing is sent: neither answer nor read more. Node frees the queue with the socket,
      // which closes once the answers ahead are written.
      if (p.closing) return void socket.pause();
      const refused = refusal(req, limits.maxHeadersCount) ?? tooManyPipelined(p);
      if (refused) {
        p.closing = true;
        return refuse(req, res, refused);
      }
      p.unanswered.push(res);
      res.on('finish', onResponseFinish);
      handle(req, res);
    },
  );
  states.set(server, state);
  server.on('connection', (socket: Socket) => {
    state.accepted++;
    state.fresh.set(socket, Date.now());
    socket.once('close', () => state.fresh.delete(socket));
  });
  // An Expect other than 100-continue: RFC 9110 §10.1.1 lets a server ignore it and answer the request as usual,
  // which keeps the answer inside the contract (Node's own reply is an empty 417).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node parses this many header lines and drops the rest unseen: one over the limit is enough to know it was exceeded.
  server.maxHeadersCount = limits.maxHeadersCount + 1;
  server.on('clientError', onClientError);
  server.on('connect', onConnect);
  return server;
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** How long a connection that has not sent a request yet may stay open once draining (its request may be on the way). */
const FRESH_GRACE_MS = 1000;

/**
 * Stop accepting and let every request the server has received finish, then resolve; after timeoutMs the
 * stragglers are cut (closeAllConnections). Node's own mechanisms do the work; shutdown must not reset a
 * connection whose request was already sent:
 * - the app answers requests that arrive from now on 503 and writes every answer with `Connection: close` (its
 *   own drain flag, set before this is called), so Node closes each connection after its answer;
 * - connections the kernel completed before the signal are still accepted (the listener stays open until a
 *   loop iteration accepts nothing more, at most 1 s) and answered, instead of being reset with the listener;
 * - server.close() then closes the idle keep-alive connections, and closeIdleConnections() runs again every
 *   50 ms for those that turn idle later;
 * - a connection that has not carried a request yet may hold one unread: Node counts it active, so it is
 *   closed here once it has been open FRESH_GRACE_MS since the drain began.
 */
export function drain(server: Server, timeoutMs: number): Promise<'drained' | 'timeout'> {
  const state = states.get(server);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (how: 'drained' | 'timeout') => {
      if (settled) return;
      settled = true;
      clearInterval(idle);
      clearTimeout(limit);
      resolve(how);
    };
    const drainingSince = Date.now();
    let closing = false;
    const closeIdle = () => {
      if (!closing) return;
      server.closeIdleConnections();
      if (state && Date.now() - drainingSince >= FRESH_GRACE_MS) {
        for (const [socket, since] of state.fresh) if (Date.now() - Math.max(since, drainingSince) >= FRESH_GRACE_MS) socket.destroy();
      }
    };
    const quietBy = drainingSince + 1000;
    let seen = -1;
    const closeWhenQuiet = () => {
      if (state && state.accepted !== seen && Date.now() < quietBy) {
        seen = state.accepted;
        return void setImmediate(closeWhenQuiet);
      }
      closing = true;
      server.close(() => finish('drained'));
      closeIdle();
    };
    setImmediate(closeWhenQuiet);
    const idle = setInterval(closeIdle, 50);
    const limit = setTimeout(() => {
      server.closeAllConnections();
      finish('timeout');
    }, timeoutMs);
  });
}
