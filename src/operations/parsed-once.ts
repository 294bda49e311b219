// Email address parsing (RFC 5321/5322 syntax, src/domain/email.ts) once per bulk request.
import { parseEmailAddress, type ParsedEmail } from '../domain/email.js';

/**
 * One request's address parser: the SMTP quota count, the item checks and the SMTP grouping each read every address,
 * and the syntax check is the costliest part of an item; each address is parsed the first time and remembered.
 */
export function parsedOnce(): (address: string) => ParsedEmail {
  const parsed = new Map<string, ParsedEmail>();
  return (address) => {
    let p = parsed.get(address);
    if (p === undefined) parsed.set(address, (p = parseEmailAddress(address)));
    return p;
  };
}
