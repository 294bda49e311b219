// UTS #46 (Unicode IDNA Compatibility Processing) ToASCII as the WHATWG URL Standard's "domain to ASCII" runs it, by
// tr46, that standard's own implementation: the same answer on every Node (node:url's converter changed between 20 and 24).
import { toASCII, type Tr46Options } from 'tr46';

/**
 * The WHATWG URL host parser's options (beStrict false): hyphen placement, STD3 characters and DNS lengths are left
 * to the callers' own grammar (RFC 1123 labels, 63 and 253 octets), which says why a name is refused.
 */
const WHATWG_DOMAIN_TO_ASCII: Readonly<Tr46Options> = Object.freeze({
  checkHyphens: false,
  checkBidi: true,
  checkJoiners: true,
  useSTD3ASCIIRules: false,
  transitionalProcessing: false,
  verifyDNSLength: false,
  ignoreInvalidPunycode: false,
});

/** Letters, digits, '-', '_' and dots, no label starting `xn--` (any case): UTS #46 only lower-cases such a name. */
const PLAIN_ASCII = /^(?!(?:[^.]*\.)*xn--)[a-z0-9_.-]*$/i;

/**
 * `domain` in A-labels, or null when UTS #46 refuses it: an `xn--` label that is not the Punycode of a valid
 * non-ASCII label (`xn--zz`, `xn--a`), a disallowed code point, a joiner out of context (CheckJoiners, RFC 5892
 * appendix A), a label breaking the bidi rule (CheckBidi, RFC 5893), a leading combining mark. Lower-cases.
 */
export function domainToAscii(domain: string): string | null {
  // The fast path is the same function on the names most requests carry (the differential test holds it so).
  if (PLAIN_ASCII.test(domain)) return domain.toLowerCase();
  return toASCII(domain, WHATWG_DOMAIN_TO_ASCII);
}
