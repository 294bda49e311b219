// Reference lists for email classification, read once at start from their npm packages: role local parts,
// disposable domains (exact and wildcard) and free-provider domains.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EmailLists } from '../../domain/email.js';

const require = createRequire(import.meta.url);

const lowerSet = (names: readonly string[]): ReadonlySet<string> => new Set(names.map((s) => s.toLowerCase()));

export function loadEmailLists(): EmailLists {
  return {
    // `role-based-email-addresses` (MIT).
    roleLocalParts: lowerSet(require('role-based-email-addresses') as string[]),
    // `disposable-email-domains` (MIT), read rather than required: the module cache would keep a second copy of
    // its 120k names.
    disposableDomains: lowerSet(JSON.parse(readFileSync(require.resolve('disposable-email-domains'), 'utf8')) as string[]),
    // The same package's wildcard list: the domain and all its subdomains.
    disposableWildcardDomains: lowerSet(require('disposable-email-domains/wildcard.json') as string[]),
    // `freemail`'s free list (ISC) only: the package's isFree() also counts its disposable list, which is not what
    // "free provider" means here.
    freeDomains: lowerSet(
      readFileSync(require.resolve('freemail/data/free.txt'), 'utf8')
        .split('\n')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  };
}
