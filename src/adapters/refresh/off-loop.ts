// A downloaded list parsed in a worker thread (./parse-worker.ts): the event loop only posts the text and takes the
// built arrays back, so a refresh never holds it for the parse (issue #57: under 20 ms per swap).
import { Worker } from 'node:worker_threads';
import { workerScript } from '../files/worker-script.js';
import type { RangeTableData } from '../../domain/ip-range-table.js';

export type ParseJob =
  | { kind: 'tor' | 'hosting' | 'disposable' | 'asns'; text: string; path: string }
  /** The publishers' files, by HOSTING_SOURCES id (one text per URL), made into the service's CSV. */
  | { kind: 'hosting-sources'; texts: Record<string, string[]>; from: Record<string, string>; today: string; path: string };

export type ParseResult = {
  /** Entries read, in all and per part (per provider for hosting): the shrink check compares these. */
  entries: number;
  counts: Record<string, number>;
  /** The text to write to DATA_DIR (the service's own format). */
  text: string;
} & ({ kind: 'ranges'; data: RangeTableData } | { kind: 'domains'; domains: string } | { kind: 'asns' });

/**
 * The parser's young generation, MB: what the service's command-line cap gave it before each thread took its own
 * limits (worker-script.ts); V8's default on Node 24 lets it grow to 128 MB.
 */
const PARSE_YOUNG_GENERATION_MB = 8;

/** Parse one list in a fresh worker (a refresh is hourly at most: no pool kept); rejects with the parser's message. */
export function parseOffLoop(job: ParseJob): Promise<ParseResult> {
  const { filename, execArgv } = workerScript(import.meta.url, 'parse-worker');
  const worker = new Worker(filename, { execArgv, resourceLimits: { maxYoungGenerationSizeMb: PARSE_YOUNG_GENERATION_MB } });
  return new Promise<ParseResult>((resolve, reject) => {
    worker.once('message', (m: { ok: true; result: ParseResult } | { ok: false; error: string }) => (m.ok ? resolve(m.result) : reject(new Error(m.error))));
    worker.once('error', (err) => reject(new Error(`the parse worker failed: ${err.message}`)));
    worker.once('exit', (code) => reject(new Error(`the parse worker exited (${code})`)));
    worker.postMessage(job);
  }).finally(() => void worker.terminate());
}
