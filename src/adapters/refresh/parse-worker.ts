// Worker-thread task: a downloaded list parsed, checked and built off the event loop (the hosting list takes ~0.2-0.7 s
// on this machine's cores): range tables come back as their typed arrays (transferred), domains as one string.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { hostingAsnsFromText } from '../ip-data/hosting-asns.js';
import { hostingRangesFromText, torExitsFromText } from '../ip-data/ip-lists.js';
import { HOSTING_SOURCES, hostingCsv, providerRanges } from '../../domain/hosting-sources.js';
import { buildRangeTableData, rangeTableBuffers, type RangeTableData } from '../../domain/ip-range-table.js';
import { disposableDomainsFromText } from '../mail/email-lists.js';
import type { ParseJob, ParseResult } from './off-loop.js';

/** Entries per provider of a `cidr,provider` CSV (for the shrink check). */
function perProvider(csv: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of csv.split('\n')) {
    if (line === '' || line.startsWith('#') || line === 'cidr,provider') continue;
    const provider = line.slice(line.indexOf(',') + 1);
    counts[provider] = (counts[provider] ?? 0) + 1;
  }
  return counts;
}

function ranges(kind: 'tor' | 'hosting', text: string, path: string): ParseResult {
  const parse = kind === 'tor' ? torExitsFromText : hostingRangesFromText;
  const { table, entries } = parse<RangeTableData>(text, path, buildRangeTableData);
  const counts = kind === 'hosting' ? { total: entries, ...perProvider(text) } : { total: entries };
  return { kind: 'ranges', data: table, entries, counts, text };
}

function run(job: ParseJob): ParseResult {
  if (job.kind === 'tor' || job.kind === 'hosting') return ranges(job.kind, job.text, job.path);
  if (job.kind === 'hosting-sources') {
    const providers = HOSTING_SOURCES.filter((s) => job.texts[s.id] !== undefined).map((s) => providerRanges(s, job.texts[s.id], job.today, job.from[s.id]));
    if (providers.length === 0) throw new Error('no hosting source configured');
    return ranges('hosting', hostingCsv(providers, job.today, 'the service (DATA_REFRESH)'), job.path);
  }
  if (job.kind === 'asns') {
    // Checked here; the service reads the saved file itself (a short list: its reload parses on the event loop).
    const list = hostingAsnsFromText(job.text, job.path);
    return { kind: 'asns', entries: list.entries, counts: { total: list.asns.length }, text: job.text };
  }
  const domains = disposableDomainsFromText(job.text, job.path);
  return { kind: 'domains', domains: domains.join('\n'), entries: domains.length, counts: { total: domains.length }, text: `${domains.join('\n')}\n` };
}

// The lowest priority for this thread alone (Linux: the calling thread): on a busy host the parse yields the cores to
// the event loop. Nothing waits on it but the refresh (the zxcvbn pool's threads, which requests wait on, run at 5).
try {
  setPriority(19);
} catch {
  // Not permitted here: the parse runs at the process's priority.
}

parentPort?.once('message', (job: ParseJob) => {
  try {
    const result = run(job);
    const transfer = result.kind === 'ranges' ? rangeTableBuffers(result.data) : [];
    parentPort!.postMessage({ ok: true, result }, transfer);
  } catch (err) {
    parentPort!.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
