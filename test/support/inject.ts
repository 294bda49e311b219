// In-process requests to a node:http request listener (Koa's app.callback()): no port, no socket, the bytes Node writes.
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Duplex } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** A socket that keeps what is written to it and reads nothing (the request body is pushed onto the request). */
class CaptureSocket extends Duplex {
  readonly written: Buffer[] = [];
  constructor(readonly remoteAddress: string) {
    super();
  }
  readonly remotePort = 40_000;
  readonly remoteFamily = 'IPv4';
  readonly localAddress = '127.0.0.1';
  readonly localPort = 80;
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.written.push(Buffer.from(chunk));
    cb();
  }
  // node:http's server response calls these on its socket.
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

export interface Injected {
  status: number;
  statusText: string;
  /** Header fields by lower-case name (a repeated field: its values joined by ", "); `names` keeps them as sent. */
  headers: Record<string, string>;
  names: string[];
  /** Every field line as sent: [name, value]. */
  raw: [string, string][];
  text: string;
  body: any;
  /** The response body as sent (chunked coding removed, content coding kept). */
  bytes: Buffer;
}

export interface InjectOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Request fields as sent, in order, repeated ones apart (instead of `headers`). */
  fields?: [string, string][];
  body?: string | Buffer | Uint8Array;
  remoteAddress?: string;
}

/** Parse the HTTP/1.1 response Node wrote: status line, fields, then a Content-Length or chunked body. */
function parse(raw: Buffer, method: string): Injected {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no complete response head was written: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const head = raw.subarray(0, split).toString('latin1').split('\r\n');
  let rest = raw.subarray(split + 4);
  const [, code, ...reason] = head[0].split(' ');
  const status = Number(code);
  const headers: Record<string, string> = {};
  const names: string[] = [];
  const fields: [string, string][] = [];
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i);
    const value = line.slice(i + 1).trim();
    names.push(name);
    fields.push([name, value]);
    const lower = name.toLowerCase();
    headers[lower] = lower in headers ? `${headers[lower]}, ${value}` : value;
  }
  if (method === 'HEAD' || status === 204 || status === 304) {
    rest = Buffer.alloc(0);
  } else if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, eol).toString(), 16);
      if (!size) break;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 4 + size);
    }
    rest = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    rest = rest.subarray(0, Number(headers['content-length']));
  }
  const text = rest.toString('utf8');
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status, statusText: reason.join(' '), headers, names, raw: fields, text, body, bytes: rest };
}

/**
 * Run one request through `listener` as Node's server would hand it over (the whole body already received).
 * Resolves with what was written once the response finished, or once the app closed the connection instead.
 */
export function inject(listener: RequestListener, path: string, opts: InjectOptions = {}): Promise<Injected> {
  const socket = new CaptureSocket(opts.remoteAddress ?? '127.0.0.1');
  const req = new IncomingMessage(socket as never);
  const method = opts.method ?? 'GET';
  req.method = method;
  req.url = path;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const given: [string, string][] = opts.fields ?? Object.entries(opts.headers ?? {});
  const fields: [string, string][] = given.some(([k]) => k.toLowerCase() === 'host') ? [] : [['host', 'api.test']];
  fields.push(...given);
  const body = opts.body === undefined ? null : Buffer.from(opts.body);
  const has = (name: string) => fields.some(([k]) => k.toLowerCase() === name);
  if (body && !has('content-length') && !has('transfer-encoding')) fields.push(['content-length', String(body.length)]);
  // As node:http's parser builds them: the first value of most fields, cookies and set-cookie kept apart, others joined.
  const headers: Record<string, string> = {};
  for (const [k, v] of fields) {
    const name = k.toLowerCase();
    if (!(name in headers)) headers[name] = v;
    else if (name === 'cookie') headers[name] += `; ${v}`;
    else if (!['host', 'content-type', 'content-length', 'user-agent', 'authorization', 'referer', 'from', 'age', 'etag', 'expires', 'location', 'server', 'retry-after', 'if-modified-since', 'if-unmodified-since', 'max-forwards', 'proxy-authorization', 'last-modified'].includes(name)) headers[name] += `, ${v}`;
  }
  req.headers = headers;
  req.rawHeaders = fields.flat();
  if (body) req.push(body);
  req.push(null);
  req.complete = true;
  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  // node:http's server tells a response its socket drained (socketOnDrain); without it a streamed answer whose chunk
  // filled the socket's buffer would wait for 'drain' forever.
  socket.on('drain', () => {
    if (!res.writableEnded) res.emit('drain');
  });
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      setImmediate(() => {
        try {
          resolve(parse(Buffer.concat(socket.written), method));
        } catch (err) {
          reject(err);
        }
      });
    };
    res.once('finish', settle);
    // The app may close the connection rather than answer (a response cut short): what was written is the answer.
    socket.once('close', settle);
    res.once('error', reject);
    listener(req, res);
  });
}

/** The body a client would read: the content coding undone, as fetch does (gzip, x-gzip, deflate, br). */
export function decodeContent(bytes: Buffer, coding: string | undefined): Buffer {
  if (!coding || bytes.length === 0) return bytes;
  let out = bytes;
  for (const c of coding.split(',').map((s) => s.trim().toLowerCase()).reverse()) {
    if (c === 'gzip' || c === 'x-gzip') out = gunzipSync(out);
    else if (c === 'deflate') out = inflateSync(out);
    else if (c === 'br') out = brotliDecompressSync(out);
    else if (c !== 'identity') return bytes;
  }
  return out;
}
