// Email verification jobs (openapi.yaml tag Jobs): the pure parts: repeated items, when to ask again, result lines.
import type { Deliverability } from './smtp-reply.js';

/** FNV-1a over a string's UTF-16 code units. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * For each item the index of its first occurrence (itself when first), and how many distinct items there are. The
 * table is a typed array (open addressing, outside the JS heap), not a Map of every item: a Map's entries survive the
 * young generation's collections, and 100,000 of them grew the API service's young generation for good (ADR 0038).
 */
export function distinctItems(items: readonly string[]): { firstOf: Int32Array; distinct: number } {
  const firstOf = new Int32Array(items.length);
  const mask = 2 ** Math.ceil(Math.log2(2 * items.length + 2)) - 1;
  const table = new Int32Array(mask + 1).fill(-1);
  let distinct = 0;
  for (let i = 0; i < items.length; i++) {
    let slot = fnv1a(items[i]) & mask;
    while (table[slot] !== -1 && items[table[slot]] !== items[i]) slot = (slot + 1) & mask;
    if (table[slot] === -1) {
      table[slot] = i;
      distinct++;
    }
    firstOf[i] = table[slot];
  }
  return { firstOf, distinct };
}

/**
 * The distinct items' indexes in runs of up to `run` addresses of one domain (submission order within a domain), the
 * domains' runs taking turns: the queue hands them out in this order, so a worker's batch holds one domain's
 * addresses, which share an SMTP session (smtp-plan.ts asks up to RECIPIENTS_PER_SESSION in one) where submission
 * order gave each its own, and the batches worked at once go to different domains (and mostly servers), each under
 * its per-address session limit.
 */
export function domainOrder(items: readonly string[], firstOf: Int32Array, run: number): Int32Array {
  const groups = new Map<string, number[]>();
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    if (firstOf[i] !== i) continue;
    const domain = items[i].slice(items[i].lastIndexOf('@') + 1).toLowerCase();
    const group = groups.get(domain);
    if (group) group.push(i);
    else groups.set(domain, [i]);
    n++;
  }
  const order = new Int32Array(n);
  let at = 0;
  let live = [...groups.values()];
  for (let from = 0; live.length > 0; from += run) {
    for (const g of live) for (let j = from; j < Math.min(g.length, from + run); j++) order[at++] = g[j];
    live = live.filter((g) => g.length > from + run);
  }
  return order;
}

/** The `unknown` reasons worth asking again: the server deferred or could not be reached (nor our Redis), it did not refuse us. */
const RETRYABLE = new Set(['greylisted', 'timeout', 'connection_failed', 'limits_unavailable', 'dns_failed']);

/**
 * When to check an item again after its `attempts`-th check answered `status`/`reason` (ms since the epoch), or null
 * when its line is final: a definitive verdict, a refusal (`blocked`), or no retry delay left (JOBS_RETRY_DELAYS).
 */
export function retryAt(status: string, reason: string, attempts: number, delaysMs: readonly number[], now: number): number | null {
  if (status !== 'unknown' || !RETRYABLE.has(reason)) return null;
  const delay = delaysMs[attempts - 1];
  return delay === undefined ? null : now + delay;
}

/** What one check of an item gave: the email result (validateEmail's body) or, when DNS failed, none. */
export type Checked = { result: { deliverability: Deliverability } & Record<string, unknown> } | { result: null };

/** The line's status and reason: the deliverability's, or `unknown`/`dns_failed` without a result. */
export function lineVerdict(checked: Checked): { status: Deliverability['status']; reason: string } {
  if (checked.result === null) return { status: 'unknown', reason: 'dns_failed' };
  return { status: checked.result.deliverability.status, reason: checked.result.deliverability.reason };
}

/** The CSV columns of a result line (openapi.yaml getEmailJobResults). */
export const CSV_COLUMNS = [
  'index', 'email', 'attempts', 'status', 'reason', 'valid_format', 'mx_record', 'a_record', 'role_address', 'disposable_email',
  'free_email_provider', 'did_you_mean', 'catch_all', 'mx_host', 'smtp_code', 'enhanced_code',
] as const;

interface Line {
  index: number;
  email: string;
  attempts: number;
  status: string;
  reason: string;
  result: any;
}

/** One result line as the CSV columns' cells (absent values null). */
export function csvCells(l: Line): Array<string | number | boolean | null> {
  const r = l.result;
  const d = r?.deliverability;
  return [
    l.index, l.email, l.attempts, l.status, l.reason, r?.validFormat ?? null, r?.mxRecord ?? null, r?.aRecord ?? null, r?.roleAddress ?? null,
    r?.disposableEmail ?? null, r?.freeEmailProvider ?? null, r?.didYouMean ?? null, d?.catchAll ?? null, d?.mxHost ?? null, d?.smtpCode ?? null,
    d?.enhancedCode ?? null,
  ];
}
