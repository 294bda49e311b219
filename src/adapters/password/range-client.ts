// Breached-password range lookups (Pwned Passwords k-anonymity range API, SHA-1 prefix of 5 hex chars).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { Agent, fetch, type Response } from 'undici';
import { parseUrl } from '../../domain/url.js';
import { UpstreamFailure } from '../../errors.js';
import { traced, withTraceContext } from '../tracing/spans.js';

export interface RangeClient {
  /**
   * Suffixes (35 upper-case hex chars) → breach count for one 5-char upper-case hex SHA-1 prefix.
   * Padding rows (count 0) are dropped. Throws UpstreamFailure (answered 502) when the range service fails.
   * The map may be shared with other callers through the cache: treat it as read-only.
   */
  range(prefix: string): Promise<Map<string, number>>;
  /** Cache counters for metrics: hits include callers that joined an in-flight lookup. */
  stats(): RangeCacheStats;
}

interface RangeCacheStats {
  hits: number;
  misses: number;
  /** Prefixes held in the cache now. */
  size: number;
}

export interface RangeClientOptions {
  /** e.g. https://api.pwnedpasswords.com; requests go to `{baseUrl}/range/{PREFIX}` and nowhere else. */
  baseUrl: string;
  /** Whole request (connect, headers, body) must finish within this. */
  timeoutMs: number;
  /**
   * Offline mirror: read `{mirrorDir}/{PREFIX}.txt` (lines `SUFFIX:COUNT`) instead of the network.
   * A missing file means "no suffix of this prefix is known" (an empty range), not an error.
   */
  mirrorDir?: string;
  /** Most prefixes cached; default 10,000. */
  cacheEntries?: number;
  /** How long a range stays cached; default 1 hour (the public data set changes rarely). */
  cacheTtlMs?: number;
  /**
   * Memory bound: most suffix rows cached across all prefixes; default 500,000 (~50 MB). A real prefix
   * has ~800-1,000 rows, so with real data this bound (~500 prefixes) is reached before cacheEntries.
   */
  cacheMaxRows?: number;
  logger?: { warn: (obj: object, msg?: string) => void };
  /** How the range host's name is resolved (compose passes the DNS_SERVERS resolver); default: the system's. */
  lookup?: LookupFunction;
}

const DEFAULT_CACHE_ENTRIES = 10_000;
const DEFAULT_CACHE_TTL_MS = 60 * 60 * 1000;
const DEFAULT_CACHE_MAX_ROWS = 500_000;

const PREFIX = /^[0-9A-F]{5}$/;
const ROW = /^([0-9A-Fa-f]{35}):(\d{1,12})$/;
/** A real answer is ~30 KB (1,000 padded rows); anything far larger is not a range answer. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const UNAVAILABLE = 'breached-password range service unavailable';

class MalformedRange extends Error {}

/** Parse `SUFFIX:COUNT` lines (CRLF or LF); rows with count 0 are padding and dropped. */
export function parseRange(body: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const m = ROW.exec(line);
    if (!m) throw new MalformedRange('malformed range row');
    const count = Number(m[2]);
    if (count > 0) out.set(m[1].toUpperCase(), count);
  }
  return out;
}

function assertPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    // A programming error, not client input: the prefix is always derived from a SHA-1 digest.
    throw new TypeError('range prefix must be exactly 5 upper-case hex characters');
  }
}

function decodeOrMalformed(decode: () => string): string {
  try {
    return decode();
  } catch {
    throw new MalformedRange('range body is not UTF-8');
  }
}

/** Reads the body as text, giving up past MAX_BODY_BYTES. */
async function readCapped(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new MalformedRange('range body too large');
  if (!res.body) return '';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.byteLength;
    if (bytes > MAX_BODY_BYTES) throw new MalformedRange('range body too large');
    text += decodeOrMalformed(() => decoder.decode(chunk, { stream: true }));
  }
  return text + decodeOrMalformed(() => decoder.decode());
}

/** A short, internals-free label of why a lookup failed, for the logger. */
function failureKind(err: unknown): string {
  if (err instanceof MalformedRange) return 'malformed';
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timeout';
  if (err instanceof Error && err.message.startsWith('status ')) return err.message;
  return 'connection';
}

/** A range from a mirror's files (PWNED_PASSWORDS_DIR/<PREFIX>.txt); an absent file is an empty range. */
async function fromMirror(dir: string, prefix: string): Promise<Map<string, number>> {
  let text: string;
  try {
    text = await readFile(join(dir, `${prefix}.txt`), { encoding: 'utf8' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw err;
  }
  return parseRange(text);
}

export function createRangeClient(opts: RangeClientOptions): RangeClient {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const mirrorDir = opts.mirrorDir;
  const cache = new LRUCache<string, Map<string, number>>({
    max: opts.cacheEntries ?? DEFAULT_CACHE_ENTRIES,
    ttl: opts.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
    maxSize: opts.cacheMaxRows ?? DEFAULT_CACHE_MAX_ROWS,
    sizeCalculation: (range) => Math.max(1, range.size),
  });
  const inFlight = new Map<string, Promise<Map<string, number>>>();
  // undici's Agent is what lets fetch take our own lookup (its keep-alive pool replaces the global one); undici's own
  // fetch takes it, so the Agent and the fetch are of one undici version, not npm's beside the one inside Node.
  const dispatcher = opts.lookup ? new Agent({ connect: { lookup: opts.lookup } }) : undefined;
  let hits = 0;
  let misses = 0;
  // The standard's own URL parser (src/domain/url.ts), as everywhere in src/; `base` passed the configuration's check.
  const baseUrl = parseUrl(base);
  const rangeAttributes = {
    'http.request.method': 'GET',
    'url.template': '/range/{prefix}',
    'server.address': baseUrl?.hostname ?? '',
    'server.port': Number(baseUrl?.port) || (baseUrl?.protocol === 'https:' ? 443 : 80),
  };

  async function fromNetwork(prefix: string): Promise<Map<string, number>> {
    const res = await fetch(`${base}/range/${prefix}`, {
      method: 'GET',
      headers: withTraceContext({ 'Add-Padding': 'true', Accept: 'text/plain' }),
      redirect: 'error', // never follow the answer anywhere but baseUrl
      signal: AbortSignal.timeout(opts.timeoutMs),
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`status ${res.status}`);
    }
    return parseRange(await readCapped(res));
  }

  async function load(prefix: string): Promise<Map<string, number>> {
    try {
      // The span names the range API by its URL template: the prefix is no attribute.
      const range = mirrorDir ? await fromMirror(mirrorDir, prefix) : await traced('GET /range/{prefix}', rangeAttributes, () => fromNetwork(prefix));
      cache.set(prefix, range);
      return range;
    } catch (err) {
      opts.logger?.warn({ kind: failureKind(err), source: mirrorDir ? 'mirror' : 'network' }, 'range lookup failed');
      throw new UpstreamFailure('range', UNAVAILABLE);
    }
  }

  return {
    async range(prefix: string): Promise<Map<string, number>> {
      assertPrefix(prefix);
      const cached = cache.get(prefix);
      if (cached) {
        hits += 1;
        return cached;
      }
      const pending = inFlight.get(prefix);
      if (pending) {
        hits += 1;
        return pending;
      }
      misses += 1;
      const started = load(prefix).finally(() => inFlight.delete(prefix));
      inFlight.set(prefix, started);
      return started;
    },
    stats(): RangeCacheStats {
      return { hits, misses, size: cache.size };
    },
  };
}
