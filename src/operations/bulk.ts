// Bulk validation (openapi.yaml validateIbans, validateBics, validateEmails): items answered in input order, each
// with the single operation's result or the error it would answer.
import type { DnsAnswer, DnsResolver } from '../adapters/dns/resolver.js';
import { ApiError } from '../errors.js';
import { asApiError, errorInfo } from '../error-answers.js';
import { createBankingOperations, type BankingDeps } from './banking.js';
import { bulkSpecs, itemChecker } from './bulk-items.js';
import { clientGone } from './client-gone.js';
import { createEmailOperations, type EmailDeps } from './email.js';
import { resultsJson } from './json-chunks.js';
import { parsedOnce } from './parsed-once.js';
import { pace } from './pacing.js';
import { keyOf, type OperationContext, type OperationHandler, type OperationId, type Reply, type SuccessBody } from './types.js';

export interface BulkDeps {
  document: Record<string, any>;
  /** BULK_MAX_ITEMS (the pipeline refuses more before a handler runs). */
  maxItems: number;
  banking: BankingDeps;
  email: EmailDeps;
}

/** Addresses in progress at once in one email bulk request. */
const EMAIL_CONCURRENCY = 16;

type Single = 'validateIban' | 'validateBic' | 'validateEmail';
interface BulkOf {
  validateIban: 'validateIbans';
  validateBic: 'validateBics';
  validateEmail: 'validateEmails';
}
/** One element of a bulk answer's `results`, as generated from openapi.yaml. */
type Element<S extends Single> = SuccessBody<BulkOf[S]> extends { results: Array<infer E> } ? E : never;

/** The part of the ErrorInfo the single operation would answer: code, message and details, card numbers masked. */
function failure(e: ApiError): { status: 400 | 502; error: { code: ApiError['code']; message: string; details: { field: string; message: string }[] } } {
  const info = errorInfo(e, '', null);
  return { status: e.status as 400 | 502, error: { code: info.code, message: info.message, details: info.details } };
}

/** An item's failure as its element; a fault (anything but an ApiError of 400 or 502) fails the whole request. */
function caught(err: unknown): ReturnType<typeof failure> {
  const e = asApiError(err);
  if (e === null || (e.status !== 400 && e.status !== 502)) throw err;
  return failure(e);
}

/**
 * Run fn over items with at most `limit` in progress, results in input order. Each worker paces before every item
 * (pacing.ts): once a domain's DNS answers are in (onceEach), an item settles in microtasks alone, and 1,000 of them
 * would otherwise run as one block of tens of milliseconds that every other request waits behind.
 */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    // Before each item, the first too: sixteen workers starting at once each send an item's DNS queries.
    for (await pace(); next < items.length; await pace()) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** One request's resolver: each (normalised name, type) asked once, every address at that domain sharing the answer. */
function onceEach(resolver: DnsResolver): DnsResolver {
  const asked = new Map<string, Promise<DnsAnswer>>();
  return {
    ...resolver,
    query(name, type) {
      const key = `${type} ${name.toLowerCase().replace(/\.$/, '')}`;
      let answer = asked.get(key);
      if (answer === undefined) asked.set(key, (answer = resolver.query(name, type)));
      return answer;
    },
    stats: () => resolver.stats(),
    remainingMs: (name, type) => resolver.remainingMs(name, type),
  };
}

/** The item check of a single operation's bulk form (openapi.yaml), from the document. */
function checkerOf(document: Record<string, any>, maxItems: number, single: Single): (item: string) => ApiError | null {
  const spec = [...bulkSpecs(document, maxItems).values()].find((s) => s.single === single);
  if (!spec) throw new Error(`openapi.yaml has no bulk operation of ${single}`);
  return itemChecker(spec);
}

/** One item through the single operation's check and handler; a fault (not an ApiError of 400/502) fails the request. */
function settle<S extends Single>(check: (item: string) => ApiError | null, item: string, run: () => Reply): Element<S> {
  const refused = check(item);
  if (refused) return failure(refused) as Element<S>;
  try {
    return { status: 200, result: run().body } as Element<S>;
  } catch (err) {
    return caught(err) as Element<S>;
  }
}

/** The same for a handler that awaits (email: DNS). */
async function answer<S extends Single>(check: (item: string) => ApiError | null, item: string, run: () => Promise<Reply>): Promise<Element<S>> {
  const refused = check(item);
  if (refused) return failure(refused) as Element<S>;
  try {
    return { status: 200, result: (await run()).body } as Element<S>;
  } catch (err) {
    return caught(err) as Element<S>;
  }
}

const context = <Op extends OperationId>(request: Partial<OperationContext<Op>['request']>): OperationContext<Op> =>
  ({ request: { params: {}, query: {}, requestBody: undefined, headers: {}, ip: '', ...request } }) as OperationContext<Op>;

export function createBankingBulkOperations(deps: Omit<BulkDeps, 'email'>): {
  validateIbans: OperationHandler<'validateIbans'>;
  validateBics: OperationHandler<'validateBics'>;
} {
  const banking = createBankingOperations(deps.banking);
  const ibanCheck = checkerOf(deps.document, deps.maxItems, 'validateIban');
  const bicCheck = checkerOf(deps.document, deps.maxItems, 'validateBic');
  return {
    // The banking handlers are synchronous: no promise per item (bench/ 'iban-bulk' row).
    validateIbans({ request }) {
      const results = request.requestBody.items.map((iban) =>
        settle<'validateIban'>(ibanCheck, iban, () => banking.validateIban(context<'validateIban'>({ params: { iban } })) as Reply),
      );
      return { status: 200, body: { results } };
    },

    validateBics({ request }) {
      const results = request.requestBody.items.map((bic) =>
        settle<'validateBic'>(bicCheck, bic, () => banking.validateBic(context<'validateBic'>({ params: { bic } })) as Reply),
      );
      return { status: 200, body: { results } };
    },
  };
}

export function createEmailBulkOperations(deps: Omit<BulkDeps, 'banking'>): { validateEmails: OperationHandler<'validateEmails'> } {
  const emailCheck = checkerOf(deps.document, deps.maxItems, 'validateEmail');
  return {
    async validateEmails(ctx, koa?: unknown) {
      const { request } = ctx;
      // Every item on the lists in use when the request came, whatever a reload swaps meanwhile.
      const lists = deps.email.email();
      const parse = parsedOnce();
      const { validateEmail, deliverabilities, verifiable } = createEmailOperations({ ...deps.email, email: () => lists, resolver: onceEach(deps.email.resolver), parse });
      const { items, smtp = false } = request.requestBody;
      // The SMTP quota takes the whole bulk or refuses it (as the request quotas do) before any item is checked.
      if (smtp && deps.email.smtpQuota) await deps.email.smtpQuota.consumeSmtp(keyOf(ctx), await verifiable(items));
      const results = await mapBounded(items, EMAIL_CONCURRENCY, (address) =>
        answer<'validateEmail'>(emailCheck, address, async () => validateEmail(context<'validateEmail'>({ query: { address } }))),
      );
      if (smtp) {
        // Verified together once every address is checked: one domain's addresses share sessions and one catch-all probe.
        const answered = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
        const verdicts = await deliverabilities(answered.map((i) => items[i]), true, clientGone(koa));
        answered.forEach((i, k) => {
          const r = results[i];
          // In place: the result was made for this request alone, its deliverability its last field (same JSON).
          if (r.status === 200) r.result.deliverability = verdicts[k];
        });
      }
      // Written in paced chunks (json-chunks.ts); the body stays for the contract check (VALIDATE_RESPONSES).
      return { status: 200, body: { results }, stream: { contentType: 'application/json; charset=utf-8', chunks: resultsJson(results) } };
    },
  };
}
