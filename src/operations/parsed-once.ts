// Email address parsing (RFC 5321/5322 syntax, src/domain/email.ts) once per bulk request, paced (pacing.ts).
import { parseEmailAddress, type ParsedEmail } from '../domain/email.js';
import { pace } from './pacing.js';

/**
 * One request's address parser: the quota count, the item checks and the SMTP grouping each read every address, and
 * the syntax check is the costliest part of an item; parseAll parses them all up front, pacing between addresses.
 */
export function parsedOnce(): { parse: (address: string) => ParsedEmail; parseAll: (items: readonly string[]) => Promise<readonly string[]> } {
  const parsed = new Map<string, ParsedEmail>();
  const parse = (address: string): ParsedEmail => {
    let p = parsed.get(address);
    if (p === undefined) parsed.set(address, (p = parseEmailAddress(address)));
    return p;
  };
  const parseAll = async (items: readonly string[]): Promise<readonly string[]> => {
    for (const item of items) {
      parse(item);
      await pace();
    }
    return items;
  };
  return { parse, parseAll };
}

