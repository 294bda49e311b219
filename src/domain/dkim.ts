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

/** A TXT string is a DKIM key record when it has a `v=DKIM1` tag or a `p=` (public key) tag. */
export function isDkimRecord(txt: string): boolean {
  if (typeof txt !== 'string') return false;
  return txt.split(';').some((part) => {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const tag = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    return (tag === 'v' && value.toUpperCase() === 'DKIM1') || tag === 'p';
  });
}
