// Reference lists for email classification (role local parts, disposable and free-provider domains), loaded once at import.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Role local parts (admin, info, support, ...) from `role-based-email-addresses` (MIT), lower case. */
export const ROLE_LOCAL_PARTS: ReadonlySet<string> = new Set(
  (require('role-based-email-addresses') as string[]).map((s) => s.toLowerCase()),
);

/** Disposable domains from `disposable-email-domains` (MIT): exact matches (read, not required: the module cache would keep a second copy of its 120k names). */
export const DISPOSABLE_DOMAINS: ReadonlySet<string> = new Set(
  (JSON.parse(readFileSync(require.resolve('disposable-email-domains'), 'utf8')) as string[]).map((s) => s.toLowerCase()),
);

/** Disposable domains from the same package's wildcard list: the domain and all its subdomains. */
export const DISPOSABLE_WILDCARD_DOMAINS: ReadonlySet<string> = new Set(
  (require('disposable-email-domains/wildcard.json') as string[]).map((s) => s.toLowerCase()),
);

/**
 * Free providers from `freemail`'s free list (ISC) only: the package's isFree() also counts its
 * disposable list, which is not what "free provider" means here. Read once, at import.
 */
export const FREE_EMAIL_DOMAINS: ReadonlySet<string> = new Set(
  readFileSync(require.resolve('freemail/data/free.txt'), 'utf8')
    .split('\n')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0),
);

/** Popular mailbox domains, most used first: the candidates for typo suggestions (ties go to the earlier one). */
export const POPULAR_EMAIL_DOMAINS: readonly string[] = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'live.com',
  'msn.com',
  'googlemail.com',
  'ymail.com',
  'me.com',
  'mac.com',
  'protonmail.com',
  'proton.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'mail.com',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'orange.fr',
  'free.fr',
  'laposte.net',
  'btinternet.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'yahoo.de',
  'hotmail.co.uk',
  'hotmail.fr',
  'hotmail.de',
  'hotmail.it',
  'libero.it',
  'qq.com',
  '163.com',
  '126.com',
  'zoho.com',
  'fastmail.com',
  'rediffmail.com',
];
