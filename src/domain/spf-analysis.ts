// SPF evaluation across include:/redirect= (RFC 7208 §5.2, §6.1, §4.6.4 lookup limit); I/O only through the given lookup.
import {
  findSpfRecords,
  lookupLimitWarning,
  parseSpf,
  spfTerms,
  lookupTermsReached,
  SPF_LOOKUP_LIMIT,
  termDomain,
} from './spf.js';
import type { SpfQualifier, SpfResult, SpfTerm } from './spf.js';

/** TXT strings of a name; [] when the name has none or does not exist. May reject on upstream failure. */
export type TxtLookup = (name: string) => Promise<string[]>;

/**
 * parseSpf of the domain's TXT, then the include: and redirect= targets followed recursively:
 * `dnsLookups` becomes the count through includes (loop-protected by the path of domains being
 * followed; exploration stops once the limit is passed), and a record without `all` takes its
 * qualifier from its redirect= target. Warnings are added for targets without an SPF record, loops,
 * targets that could not be looked up, macro targets that cannot be followed, and the redirect target's
 * own warnings. The lookup of `domain` itself rejects as txtLookup does; failures below it become warnings.
 */
export async function analyseSpf(domain: string, txtLookup: TxtLookup): Promise<SpfResult> {
  const top = parseSpf(await txtLookup(domain));
  if (!top.present) return top;

  const warnings = top.warnings.filter((w) => w !== lookupLimitWarning(top.dnsLookups));
  const fetched = new Map<string, Promise<string | null>>();
  let total = 0;

  /** The (first) SPF record of a target; null when it has none; throws when the lookup failed. */
  const spfOf = (name: string): Promise<string | null> => {
    const key = name.toLowerCase();
    let p = fetched.get(key);
    if (!p) {
      p = txtLookup(key).then((txt) => findSpfRecords(txt)[0] ?? null);
      p.catch(() => undefined); // handled where awaited
      fetched.set(key, p);
    }
    return p;
  };

  /** Count one record's lookups, recurse into its targets; resolves with its effective default qualifier. */
  async function walk(record: string, path: readonly string[], warn: (w: string) => void): Promise<SpfQualifier> {
    const terms = spfTerms(record);
    const reached = lookupTermsReached(terms);
    total += reached.length;
    const all = terms.find((t) => t.kind === 'mechanism' && t.name === 'all');
    const redirect = reached.find((t) => t.kind === 'modifier' && t.name === 'redirect');
    const targets = reached.filter((t) => t.kind === 'mechanism' && t.name === 'include');
    if (redirect) targets.push(redirect);

    const followable = targets.filter((t) => termDomain(t) && !termDomain(t).includes('%'));
    for (const t of targets) if (termDomain(t).includes('%')) warn(`'${t.raw}' uses macros; not followed`);
    const nameOf = (t: SpfTerm): string => termDomain(t).toLowerCase().replace(/\.$/, '');
    if (total <= SPF_LOOKUP_LIMIT) {
      for (const t of followable) if (!path.includes(nameOf(t))) void spfOf(nameOf(t)); // fetch siblings concurrently
    }

    let qualifier: SpfQualifier = all ? (`${all.qualifier}all` as SpfQualifier) : '?all';
    for (const t of followable) {
      if (total > SPF_LOOKUP_LIMIT) break;
      const target = nameOf(t);
      if (path.includes(target)) {
        warn(`'${t.raw}' loops back to ${target} (permerror)`);
        continue;
      }
      let child: string | null;
      try {
        child = await spfOf(target);
      } catch {
        warn(`'${t.raw}': the DNS lookup of ${target} failed`);
        continue;
      }
      if (child === null) {
        warn(`'${t.raw}': ${target} has no SPF record (permerror)`);
        continue;
      }
      if (t === redirect) {
        for (const w of parseSpf([child]).warnings) {
          if (!w.includes('DNS-querying terms exceed')) warn(`redirect=${target}: ${w}`);
        }
        qualifier = await walk(child, [...path, target], warn);
      } else {
        await walk(child, [...path, target], warn);
      }
    }
    return qualifier;
  }

  const qualifier = await walk(top.rawRecord, [domain.toLowerCase().replace(/\.$/, '')], (w) => {
    if (!warnings.includes(w)) warnings.push(w);
  });
  if (total > SPF_LOOKUP_LIMIT) warnings.push(lookupLimitWarning(total));
  return { ...top, qualifier, dnsLookups: total, warnings };
}
