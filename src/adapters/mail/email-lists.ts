// Reference lists for email classification, read from their npm packages' files (at start, and again on a reload):
// role local parts, disposable domains and free-provider domains. The disposable list's choice: docs/adr/0023.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { EmailLists } from '../../domain/email.js';

const require = createRequire(import.meta.url);

const lowerSet = (names: readonly string[]): ReadonlySet<string> => new Set(names.map((s) => s.toLowerCase()));

/** The files the lists are read from (a reload failure names them). */
export const EMAIL_LIST_FILES = {
  // `role-based-email-addresses` (MIT).
  role: require.resolve('role-based-email-addresses'),
  // `disposable-email-domains-js` (CC0-1.0): the disposable-email-domains/disposable-email-domains blocklist, read
  // rather than required (a reload must see a new version). Its names match exactly, as the package's own lookup does.
  disposable: require.resolve('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json'),
  // `freemail`'s free list (ISC) only: the package's isFree() also counts its disposable list, which is not what
  // "free provider" means here.
  free: require.resolve('freemail/data/free.txt'),
};

/** A plausible domain name as the lists hold them (lower case, at least two labels). */
const DOMAIN = /^(?=.{3,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * Disposable domains from the package's JSON array or the project's own `disposable_email_blocklist.conf` (one name
 * per line, `#` comments): lower-cased, deduplicated. A line that is not a domain name fails the whole list: a file
 * half understood (an HTML error page) must not replace the list in use.
 */
export function disposableDomainsFromText(text: string, path = 'disposable domains'): string[] {
  const trimmed = text.trimStart();
  const names = trimmed.startsWith('[') ? (JSON.parse(trimmed) as unknown[]) : text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '');
  const out = new Set<string>();
  for (const [i, name] of names.entries()) {
    const domain = typeof name === 'string' ? name.trim().toLowerCase() : '';
    if (!DOMAIN.test(domain)) throw new Error(`${path}: entry ${i + 1} is not a domain name: ${String(name).slice(0, 80)}`);
    out.add(domain);
  }
  if (out.size === 0) throw new Error(`${path}: no domain`);
  return [...out];
}

/** A list that reads as empty would answer "not disposable" for everything while the server looks healthy. */
function nonEmpty(name: string, set: ReadonlySet<string>): ReadonlySet<string> {
  if (set.size === 0) throw new Error(`the ${name} list is empty`);
  return set;
}

/** Each list read on its own (asynchronously: a reload must not stall requests on the disk). */
export const EMAIL_LIST_READERS = {
  async role(): Promise<ReadonlySet<string>> {
    // A CommonJS module: taken out of require's cache (its documented cache) so a new version is read.
    delete require.cache[EMAIL_LIST_FILES.role];
    return nonEmpty('roleLocalParts', lowerSet(require(EMAIL_LIST_FILES.role) as string[]));
  },
  disposable: async (path = EMAIL_LIST_FILES.disposable): Promise<ReadonlySet<string>> =>
    nonEmpty('disposableDomains', new Set(disposableDomainsFromText(await readFile(path, 'utf8'), path))),
  async free(): Promise<ReadonlySet<string>> {
    const text = await readFile(EMAIL_LIST_FILES.free, 'utf8');
    return nonEmpty('freeDomains', lowerSet(text.split('\n').map((s) => s.trim()).filter((s) => s.length > 0)));
  },
};

/** The classification's lists from the three sets. */
export const emailLists = (role: ReadonlySet<string>, disposable: ReadonlySet<string>, free: ReadonlySet<string>): EmailLists => ({
  roleLocalParts: role,
  disposableDomains: disposable,
  // The list has no wildcard names: a subdomain is disposable only where the list names it.
  disposableWildcardDomains: new Set(),
  freeDomains: free,
});

/** The three lists at once. */
export async function loadEmailLists(): Promise<EmailLists> {
  const [role, disposable, free] = await Promise.all([EMAIL_LIST_READERS.role(), EMAIL_LIST_READERS.disposable(), EMAIL_LIST_READERS.free()]);
  return emailLists(role, disposable, free);
}
