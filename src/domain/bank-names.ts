// Bank names as the national directories spell them: when two spellings name the same bank (ISO 9362 BIC sharing).
//
// One BIC may be listed under several bank codes. The names are one bank when they differ only in case, accents,
// punctuation or a trailing legal form ("Paynovate", "Paynovate S.A."), or when one is the other plus a unit of it
// ("Commerzbank" and "Commerzbank, Filiale Berlin 1", "Volksbank Stuttgart GAA", "ZTB der Commerzbank": the
// Bundesbank lists a bank's units under their own codes). Otherwise (CEPAFRPPXXX's regional Caisses d'Epargne,
// GENODEF1's cooperative banks) they are several banks.

/** Trailing tokens that say a company's legal form, not which company it is. */
const LEGAL_FORMS = new Set([
  'a', 'ab', 'abp', 'ad', 'ag', 'akcyjna', 'as', 'asa', 'bv', 'co', 'dd', 'doo', 'ead', 'eg', 'egen', 'gmbh', 'inc',
  'kg', 'limited', 'ltd', 'nv', 'oyj', 'plc', 's', 'sa', 'sae', 'sal', 'sas', 'sau', 'se', 'sl', 'spa', 'spolka', 'sro',
]);
/** Tokens from which on a German directory name says a unit of the bank (branch, cash machines, business line,
 * old or former name): "Gf2", "GAA", "Filiale", "-alt-", "vormals", "ehem.". */
const UNIT_MARKER = /^(alt|cc|ehem|fil|filiale|gaa|(gf|gs|zw)\d*|ndl|niederlassung|service|vormals|zweigstelle)$/;

/** The name reduced to what tells banks apart: letters and digits, no accents, no legal form, no unit. */
export function bankKey(name: string): string {
  let tokens = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== '');
  const of = tokens.indexOf('der'); // "ZTB der Commerzbank": a unit of Commerzbank
  if (of > 0 && of < tokens.length - 1) tokens = tokens.slice(of + 1);
  const unit = tokens.findIndex((t, i) => i > 0 && UNIT_MARKER.test(t));
  if (unit > 0) tokens = tokens.slice(0, unit);
  while (tokens.length > 1 && LEGAL_FORMS.has(tokens[tokens.length - 1])) tokens.pop();
  return tokens.join(' ');
}

const extends_ = (key: string, root: string) => key === root || key.startsWith(`${root} `);

/** The names listed under one BIC, grouped into banks; each bank answered by its shortest spelling. */
export class BanksOfBic {
  private readonly names = new Set<string>();
  private roots: { key: string; name: string }[] | null = null;

  add(name: string): void {
    if (name === '' || this.names.has(name)) return;
    this.names.add(name);
    this.roots = null;
  }

  private group(): { key: string; name: string }[] {
    if (this.roots) return this.roots;
    const keyed = [...this.names].map((name) => ({ key: bankKey(name), name }));
    keyed.sort((a, b) => a.key.length - b.key.length || a.name.length - b.name.length || (a.name < b.name ? -1 : 1));
    const roots: { key: string; name: string }[] = [];
    for (const k of keyed) if (!roots.some((r) => extends_(k.key, r.key))) roots.push(k);
    return (this.roots = roots);
  }

  /** How many different banks the names say; at least 1 for a listed BIC (a table may carry no name). */
  get banks(): number {
    return Math.max(1, this.group().length);
  }

  /** The one bank's name, or null when the BIC is shared or no table names it. */
  get name(): string | null {
    const roots = this.group();
    return roots.length === 1 ? roots[0].name : null;
  }
}
