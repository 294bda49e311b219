// In-process requests to a node:http request listener (Koa's app.callback()): no port, no socket, the bytes Node writes.
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Duplex } from 'node:stream';

/** A socket that keeps what is written to it and reads nothing (the request body is pushed onto the request). */
class CaptureSocket extends Duplex {
  readonly written: Buffer[] = [];
  constructor(readonly remoteAddress: string) {
    super();
  }
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.written.push(Buffer.from(chunk));
    cb();
  }
}

export interface Injected {
  status: number;
  /** Header fields by lower-case name; `names` keeps them as sent. */
  headers: Record<string, string>;
  names: string[];
  text: string;
  body: any;
}

export interface InjectOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  remoteAddress?: string;
}

/** Parse the HTTP/1.1 response Node wrote: status line, fields, then a Content-Length or chunked body. */
function parse(raw: Buffer): Injected {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, split).toString('latin1').split('\r\n');
  let rest = raw.subarray(split + 4);
  const status = Number(head[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  const names: string[] = [];
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    names.push(line.slice(0, i));
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, eol).toString(), 16);
      if (!size) break;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 4 + size);
    }
    rest = Buffer.concat(parts);
  }
  const text = rest.toString('utf8');
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status, headers, names, text, body };
}

/** Run one request through `listener` as Node's server would hand it over (the whole body already received). */
export function inject(listener: RequestListener, path: string, opts: InjectOptions = {}): Promise<Injected> {
  const socket = new CaptureSocket(opts.remoteAddress ?? '127.0.0.1');
  const req = new IncomingMessage(socket as never);
  req.method = opts.method ?? 'GET';
  req.url = path;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const headers: Record<string, string> = { host: 'api.test' };
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  const body = opts.body === undefined ? null : Buffer.from(opts.body);
  if (body && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(body.length);
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flat();
  if (body) req.push(body);
  req.push(null);
  req.complete = true;
  const res = new ServerResponse(req);
  res.assignSocket(socket as never);
  return new Promise((resolve, reject) => {
    res.once('finish', () => setImmediate(() => resolve(parse(Buffer.concat(socket.written)))));
    res.once('error', reject);
    listener(req, res);
  });
}
