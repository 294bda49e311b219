// Health of a writer that never waits for a lock: how long its writes have failed, one warning past a threshold, one line when they succeed again.

export interface WriteLogger {
  warn(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
}

export interface WriteStatus {
  /** Seconds since the store last took a write (a flush with nothing to write counts: nothing was waiting). */
  lastWriteAgeSeconds: number;
  /** Writes have failed for degradedAfterMs or longer: the counts since then are held in memory only. */
  degraded: boolean;
  /** Seconds the writes have failed for; null while they succeed. */
  failingForSeconds: number | null;
}

export interface WriteHealth {
  succeeded(written: number): void;
  failed(err: unknown): void;
  status(): WriteStatus;
}

export interface WriteHealthOptions {
  /** What is written, for the log lines ("usage counters"). */
  what: string;
  degradedAfterMs: number;
  logger?: WriteLogger;
  now?: () => number;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

export function trackWrites(opts: WriteHealthOptions): WriteHealth {
  const now = opts.now ?? Date.now;
  let lastSuccess = now();
  let failingSince: number | null = null;
  let warned = false;
  return {
    succeeded(written) {
      const t = now();
      if (warned) {
        const log = opts.logger?.info ?? opts.logger?.warn;
        log?.call(opts.logger, { failedForS: seconds(t - (failingSince ?? t)), written }, `${opts.what} written again`);
      }
      warned = false;
      failingSince = null;
      lastSuccess = t;
    },
    failed(err) {
      const t = now();
      failingSince ??= t;
      // One warning per failing spell, however many attempts fail in it.
      if (!warned && t - failingSince >= opts.degradedAfterMs) {
        warned = true;
        opts.logger?.warn(
          { err: String(err), failingForS: seconds(t - failingSince) },
          `${opts.what} not written for ${seconds(t - failingSince)} s; kept in memory, written once the database takes writes again`,
        );
      }
    },
    status() {
      const t = now();
      return {
        lastWriteAgeSeconds: (t - lastSuccess) / 1000,
        degraded: failingSince !== null && t - failingSince >= opts.degradedAfterMs,
        failingForSeconds: failingSince === null ? null : (t - failingSince) / 1000,
      };
    },
  };
}
