// Asynchronous log output: lines gathered during a tick are written with one write, in order, off the event loop.
import { write, writeSync } from 'node:fs';

/**
 * A pino destination for fd 1 (or any fd). sonic-boom, pino's default, measures its whole pending
 * buffer on every line (Buffer.byteLength), a large share of a light request (docs/adr/0009); here a line
 * costs an array push. At most one write is in flight, so lines keep their order; flushSync() empties
 * the queue before exit.
 */
export class LogSink {
  private queue: string[] = [];
  private queued = 0;
  private writing = false;
  private scheduled = false;
  /** Lines dropped because the queue passed maxQueuedChars (a stalled reader must not grow memory). */
  dropped = 0;

  constructor(
    private readonly fd = 1,
    private readonly maxQueuedChars = 64 * 1024 * 1024,
  ) {}

  write(line: string): boolean {
    if (this.queued + line.length > this.maxQueuedChars) {
      this.dropped++;
      return false;
    }
    this.queue.push(line);
    this.queued += line.length;
    if (!this.writing && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
    return true;
  }

  private take(): string {
    const data = this.queue.join('');
    this.queue = [];
    this.queued = 0;
    return data;
  }

  private drain(): void {
    this.scheduled = false;
    if (this.writing || this.queue.length === 0) return;
    this.writing = true;
    this.writeAll(Buffer.from(this.take()));
  }

  private writeAll(buf: Buffer): void {
    write(this.fd, buf, 0, buf.length, null, (err, written) => {
      if (!err && written < buf.length) return this.writeAll(buf.subarray(written));
      // A failed log write cannot be reported through the log; it is dropped rather than retried forever.
      this.writing = false;
      if (this.queue.length > 0) this.drain();
    });
  }

  /** Write whatever is queued, synchronously: for shutdown and fatal paths only. */
  flushSync(): void {
    if (this.queue.length === 0) return;
    const buf = Buffer.from(this.take());
    let off = 0;
    // A non-blocking pipe may refuse for a moment (EAGAIN); a reader that never drains must not hang exit.
    for (let attempts = 0; off < buf.length && attempts < 10_000; attempts++) {
      try {
        off += writeSync(this.fd, buf, off);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      }
    }
  }

  /** pino calls this from logger.flush(). */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }
}
