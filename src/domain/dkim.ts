// DKIM key-record discovery helpers (RFC 6376 §3.6.1 key records, §3.6.2.1 SELECTOR._domainkey.DOMAIN names).

/** Selectors probed at SELECTOR._domainkey.DOMAIN, chosen from common providers' defaults. */
export const DKIM_SELECTORS: readonly string[] = [
  'default',
  'google',
  'selector1',
  'selector2',
  'k1',
  'k2',
  'k3',
  's1',
  's2',
  'dkim',
  'mail',
  'email',
  'smtp',
  'mandrill',
  'mxvault',
  'everlytickey1',
  'everlytickey2',
  'key1',
  'key2',
  'sig1',
  'zendesk1',
  'zendesk2',
  'ctct1',
  'ctct2',
];

/** The DNS name holding a selector's key record. */
export const dkimName = (selector: string, domain: string): string => `${selector}._domainkey.${domain}`;

/**
 * A TXT string is a usable DKIM key record (RFC 6376 §3.6.1): a non-empty `p=` public key, and, when the
 * record has a `v=` tag, `v=DKIM1` as its first tag. An empty `p=` is a revoked key: not a usable record.
 */
export function isDkimRecord(txt: string): boolean {
  if (typeof txt !== 'string') return false;
  const tags = txt.split(';').map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? null : { tag: part.slice(0, eq).trim().toLowerCase(), value: part.slice(eq + 1).trim() };
  });
  const version = tags.findIndex((t) => t?.tag === 'v');
  if (version > 0 || (version === 0 && tags[0]?.value !== 'DKIM1')) return false;
  return tags.some((t) => t?.tag === 'p' && t.value !== '');
}
