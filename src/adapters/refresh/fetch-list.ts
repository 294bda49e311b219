// HTTP(S) GET of a published list (RFC 9110) under the outbound-target guard, with a deadline, a size cap and at most
// three redirects, each hop guarded again: a list URL (or a redirect) that names a private address is refused, and so
// is a redirect from HTTPS to HTTP.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseTlsTarget } from '../../domain/tls-target.js';
import { parseUrl, resolveUrl, type ParsedUrl } from '../../domain/url.js';
import { RefusedTarget } from '../../errors.js';
import { guardedAddress, type TargetGuardOptions } from '../tls/target-guard.js';

export interface FetchListOptions extends TargetGuardOptions {
  /** Budget for the whole download, redirects included. */
  timeoutMs: number;
  /** Largest body read; a longer one fails the download. */
  maxBytes: number;
  /** Extra trusted roots (PEM) for HTTPS: tests serve on loopback with their own CA. */
  ca?: string[];
  /** The guard each hop passes (default: guardedAddress with these options). */
  guard?: typeof guardedAddress;
}

export interface FetchedList {
  body: string;
  /** The Last-Modified day (YYYY-MM-DD) when the server sent one. */
  lastModified: string | null;
  /** The URL the body came from after redirects. */
  url: string;
}

const MAX_REDIRECTS = 3;

/** Why a download failed, a fixed phrase naming the URL (never a library's text, never the body). */
export class ListFetchError extends Error {}

function lastModifiedDay(res: IncomingMessage): string | null {
  const header = res.headers['last-modified'];
  const t = header ? Date.parse(header) : NaN;
  return Number.isNaN(t) ? null : new Date(t).toISOString().slice(0, 10);
}

/** The guarded address of a URL's host; throws ListFetchError when it is refused or does not resolve. */
async function addressOf(o: FetchListOptions, url: ParsedUrl, text: string): Promise<string> {
  const target = parseTlsTarget(url.hostname);
  if (target.kind === 'invalid') throw new ListFetchError(`${text}: not a valid host`);
  try {
    const guarded = await (o.guard ?? guardedAddress)(o, target);
    if ('failure' in guarded) throw new ListFetchError(`${text}: ${guarded.failure}`);
    return guarded.address;
  } catch (err) {
    if (err instanceof RefusedTarget) throw new ListFetchError(`${text}: ${url.hostname} is a non-public address, which is not fetched`);
    if (err instanceof ListFetchError) throw err;
    throw new ListFetchError(`${text}: the DNS lookup of ${url.hostname} failed`);
  }
}

type Hop = { redirect: string } | FetchedList;

/** One GET to a guarded address: the body, or where it redirects. */
function get(o: FetchListOptions, url: ParsedUrl, text: string, address: string, deadline: number): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const port = Number(url.port || (https ? 443 : 80));
    const options = { host: address, port, path: `${url.pathname}${url.search}`, method: 'GET', headers: { host: url.host, 'user-agent': 'validation-api-data-refresh', accept: '*/*' }, agent: false as const };
    const req = https ? httpsRequest({ ...options, servername: parseTlsTarget(url.hostname).kind === 'hostname' ? url.hostname : undefined, ...(o.ca ? { ca: o.ca } : {}) }) : httpRequest(options);
    const fail = (reason: string) => {
      clearTimeout(timer);
      req.destroy();
      reject(new ListFetchError(`${text}: ${reason}`));
    };
    const timer = setTimeout(() => fail(`no complete answer within ${o.timeoutMs} ms`), Math.max(1, deadline - performance.now()));
    req.on('error', () => fail('the connection failed'));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        clearTimeout(timer);
        req.destroy();
        return resolve({ redirect: res.headers.location });
      }
      if (status !== 200) return fail(`answered HTTP ${status}`);
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > o.maxBytes) return fail(`is ${declared} bytes, more than the cap of ${o.maxBytes}`);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > o.maxBytes) return fail(`is more than the cap of ${o.maxBytes} bytes`);
        chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ body: Buffer.concat(chunks).toString('utf8'), lastModified: lastModifiedDay(res), url: text });
      });
      res.on('error', () => fail('the answer ended early'));
    });
    req.end();
  });
}

/** Download `text` (an http or https URL), following up to three redirects, each target guarded. */
export async function fetchList(o: FetchListOptions, text: string): Promise<FetchedList> {
  const deadline = performance.now() + o.timeoutMs;
  let current = text;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const url = parseUrl(current);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ListFetchError(`${current}: not an http(s) URL`);
    const address = await addressOf(o, url, current);
    const got = await get(o, url, current, address, deadline);
    if (!('redirect' in got)) return got;
    const next = resolveUrl(got.redirect, current);
    if (!next) throw new ListFetchError(`${current}: redirects to an invalid URL`);
    // From HTTPS to plain HTTP anyone on the path could hand over a list of their own.
    if (url.protocol === 'https:' && next.protocol !== 'https:') throw new ListFetchError(`${current}: redirects from HTTPS to ${next.protocol.slice(0, -1)}, which is not followed`);
    current = next.href;
  }
  throw new ListFetchError(`${text}: more than ${MAX_REDIRECTS} redirects`);
}
