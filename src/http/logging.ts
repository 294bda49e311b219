// Structured logging with pino: one JSON line per request; secrets redacted by configuration, never by luck.
import pino, { type Logger, type DestinationStream } from 'pino';
import { LogSink } from '../adapters/logging/log-sink.js';

/** Paths that must never reach a log line, whatever a future log call passes in. */
export const REDACT_PATHS = [
  'password',
  'cardNumber',
  'key',
  'apiKey',
  '*.password',
  '*.cardNumber',
  '*.key',
  '*.apiKey',
  'req.headers["x-api-key"]',
  'headers["x-api-key"]',
  'body',
  '*.body',
];

/** Field names censored at any depth, compared lower-case without '-' and '_' (X-Api-Key, card_number, ...). */
const SECRET_NAMES: ReadonlySet<string> = new Set(['password', 'cardnumber', 'number', 'pan', 'key', 'apikey', 'xapikey', 'authorization', 'cookie', 'body', 'rawbody']);
const MAX_DEPTH = 8;

/** A copy of `value` with every secret-named field censored, however deep; cycles and depth beyond 8 are cut. */
export function censorSecrets(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Error) return value;
  if (depth >= MAX_DEPTH || seen.has(value)) return '[cut]';
  seen.add(value); // the objects on the path from the root: a cycle, not an object met twice, is cut
  let out: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) out = value.map((v) => censorSecrets(v, depth + 1, seen));
  else {
    out = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_NAMES.has(k.toLowerCase().replace(/[-_]/g, '')) ? '[redacted]' : censorSecrets(v, depth + 1, seen);
    }
  }
  seen.delete(value);
  return out;
}

/** The destination of each logger made here: the access log writes its lines there (pino keeps its own out of reach). */
const destinations = new WeakMap<Logger, DestinationStream>();

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const stream: DestinationStream = destination ?? new LogSink(1);
  const logger = pino(
    {
      level,
      base: { service: 'validation-lookup' },
      // Paths for speed and certainty where we know the shape; the walk for shapes nobody foresaw.
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { log: (obj) => censorSecrets(obj) as Record<string, unknown> },
    },
    stream,
  );
  destinations.set(logger, stream);
  return logger;
}

/** The fields of an access-log line: fixed and safe by construction (never a path, query, header or body). */
export interface AccessEntry {
  requestId: string;
  /** A method token (Node's parser admits nothing else). */
  method: string;
  /** The route template from openapi.yaml, null when no route matched. */
  route: string | null;
  operationId: string;
  status: number;
  durationMs: number;
  keyId: string | null;
  /** The W3C trace id of the request's span, while tracing is on. */
  traceId?: string;
}

export interface AccessLog {
  write(entry: AccessEntry): void;
}

/**
 * One pino-format line per request (level, time, the root's bindings, then the fields above), serialised
 * here and handed to the destination createLogger gave the root: the fields need neither redaction nor pino's
 * generic serialiser, which cost a visible share of a light request (docs/adr/0009). Honours the root's level. A logger made
 * elsewhere writes the entry through pino itself.
 */
export function accessLogger(root: Logger): AccessLog {
  const stream = destinations.get(root);
  if (!stream) return { write: (e) => root.info(e) };
  const level = root.levels.values.info;
  const bindings = JSON.stringify(root.bindings()).slice(1, -1);
  const prefix = `{"level":${level},"time":`;
  const rest = bindings ? `,${bindings},"requestId":"` : `,"requestId":"`;
  return {
    write(e) {
      if (!root.isLevelEnabled('info')) return;
      stream.write(
        `${prefix}${Date.now()}${rest}${e.requestId}","method":${quoted(e.method)},"route":${quoted(e.route)},` +
          `"operationId":${quoted(e.operationId)},"status":${e.status},"durationMs":${e.durationMs},"keyId":${quoted(e.keyId)}` +
          (e.traceId === undefined ? '}\n' : `,"traceId":"${e.traceId}"}\n`),
      );
    },
  };
}

/**
 * JSON string literals of the few values these fields take (methods, routes, operation ids, key ids), remembered:
 * the JSON.stringify calls were a large part of a line's cost. Bounded; values past the bound are quoted each time.
 */
const literals = new Map<string, string>();
function quoted(value: string | null): string {
  if (value === null) return 'null';
  let literal = literals.get(value);
  if (literal === undefined) {
    literal = JSON.stringify(value);
    if (literals.size < 4096) literals.set(value, literal);
  }
  return literal;
}

export type { Logger };
