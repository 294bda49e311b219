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

/**
 * Read the lists (asynchronously: a reload must not stall requests on the disk). `disposableFile`: a downloaded
 * copy of the disposable list (DATA_REFRESH) instead of the package's.
 */
export async function loadEmailLists(disposableFile: string = EMAIL_LIST_FILES.disposable): Promise<EmailLists> {
  // The role list is a CommonJS module: taken out of require's cache (its documented cache) so a new version is read.
  delete require.cache[EMAIL_LIST_FILES.role];
  const [role, disposable, free] = await Promise.all([
    require(EMAIL_LIST_FILES.role) as string[],
    readFile(disposableFile, 'utf8').then((t) => disposableDomainsFromText(t, disposableFile)),
    readFile(EMAIL_LIST_FILES.free, 'utf8'),
  ]);
  const lists: EmailLists = {
    roleLocalParts: lowerSet(role),
    disposableDomains: lowerSet(disposable),
    // The list has no wildcard names: a subdomain is disposable only where the list names it.
    disposableWildcardDomains: new Set(),
    freeDomains: lowerSet(free.split('\n').map((s) => s.trim()).filter((s) => s.length > 0)),
  };
  // A list that reads as empty would answer "not disposable" for everything while the server looks healthy.
  for (const [name, set] of Object.entries(lists)) if (set.size === 0 && name !== 'disposableWildcardDomains') throw new Error(`the ${name} list is empty`);
  return lists;
}
