// URLs as the WHATWG URL Standard parses them, by whatwg-url (the standard's reference implementation, on tr46 like
// src/domain/idna.ts): a URL's verdict (its scheme, its host) does not change with the runtime's own URL parser.
import { createRequire } from 'node:module';

/** The parts of a parsed URL the service reads; the same names and serialisations as the global URL's. */
export interface ParsedUrl {
  readonly protocol: string;
  readonly host: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
}

// whatwg-url ships CommonJS without type declarations: its URL class, typed by hand for what is read (pinned: ADR 0020).
const require = createRequire(import.meta.url);
const { URL: WhatwgUrl } = require('whatwg-url') as { URL: new (text: string) => ParsedUrl };

/** `text` as an absolute URL, or null when the standard's parser refuses it. Never throws. */
export function parseUrl(text: string): ParsedUrl | null {
  try {
    return new WhatwgUrl(text);
  } catch {
    return null;
  }
}
