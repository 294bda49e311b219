// URLs as the WHATWG URL Standard parses them, by whatwg-url (the standard's reference implementation, on tr46 like
// src/domain/idna.ts): a URL's verdict (its scheme, its host) does not change with the runtime's own URL parser.
import { URL as WhatwgUrl } from 'whatwg-url';

/**
 * The parts of a parsed URL the service reads (the fields untyped-packages.d.ts declares of whatwg-url's URL, listed
 * once there); the same names and serialisations as the global URL's.
 */
export type ParsedUrl = WhatwgUrl;

/** `text` as an absolute URL, or null when the standard's parser refuses it. Never throws. */
export function parseUrl(text: string): ParsedUrl | null {
  try {
    return new WhatwgUrl(text);
  } catch {
    return null;
  }
}

/** `text` (a redirect's Location: absolute or relative) resolved against `base`, or null when refused. Never throws. */
export function resolveUrl(text: string, base: string): ParsedUrl | null {
  try {
    return new WhatwgUrl(text, base);
  } catch {
    return null;
  }
}
