// Structured logging with pino: one JSON line per request; secrets redacted by configuration, never by luck.
import pino, { type Logger, type DestinationStream } from 'pino';

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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'validation-lookup' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  );
}

export type { Logger };
