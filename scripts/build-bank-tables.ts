// Build data/banks/<CC>.json (national bank code -> BIC, ISO 9362) from schwifty's bank registry, a git checkout.
//
// Usage: node --import tsx scripts/build-bank-tables.ts <schwifty git dir> [out dir, default data/banks]
// Reads schwifty/bank_registry/*.json at the checkout's HEAD (generated_* from the national banks' own files,
// manual_* curated), keeps one BIC per bank code and the code's own name, and writes one compact JSON per country
// with the date the source file last changed (git log). The data is MIT-licensed (schwifty, Martin Domke): see
// data/banks/NOTICE.
// A bank code without a BIC (or with a malformed one) keeps its name, with BIC "": ES 0074, CZ 2100 are banks.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Served elsewhere (DE: bankdata-germany) or useless here (UA: no BICs; SA: no bank codes). */
const SKIP = new Set(['DE', 'UA', 'SA']);
/** Where schwifty's generated_* tables come from (its scripts/get_bank_registry_*.py); manual_* are curated by hand. */
const ORIGIN: Readonly<Record<string, string>> = {
  AT: 'Oesterreichische Nationalbank, SEPA-Zahlungsverkehrs-Verzeichnis',
  BE: 'National Bank of Belgium, full list of bank codes',
  CH: 'SIX Interbank Clearing, bankmaster',
  CZ: 'Czech National Bank, kody_bank_CR.csv',
  ES: 'iban.es bank lists (Banco de España codes)',
  FI: 'Finance Finland, bank codes and BICs',
  HR: 'Croatian National Bank, VBB list',
  HU: 'Magyar Nemzeti Bank, sht.xlsx',
  IT: 'Banca d\'Italia GIAVA register and ibancalculator.com',
  LI: 'SIX Interbank Clearing, bankmaster',
  LT: 'Bank of Lithuania, branches list',
  LV: 'Latvijas Banka, BIC list',
  NL: 'Betaalvereniging Nederland, BIC-lijst-NL',
  NO: 'Bits AS, IBAN/BIC list',
  PL: 'Narodowy Bank Polski, EWIB plewibnra.txt',
  RO: 'internationalmoneytransfers.org Romania SWIFT list',
  SE: 'Bankinfrastruktur i Sverige, IBAN and national account numbers',
  SI: 'Banka Slovenije list',
  SK: 'Národná banka Slovenska, Directory_IC_DPS_SR.csv',
};
const BIC = /^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;
const REGISTRY = 'schwifty/bank_registry';

interface Entry {
  country_code: string;
  bank_code: string;
  bic: string;
  name?: string;
  short_name?: string;
  primary?: boolean;
}

const [gitDir, outDir = 'data/banks'] = process.argv.slice(2);
if (!gitDir) {
  process.stderr.write('usage: build-bank-tables.ts <schwifty git dir> [out dir]\n');
  process.exit(2);
}
const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

/** v2 files list bank_codes per entry; v1 files one bank_code per entry. */
function entriesOf(text: string): Entry[] {
  const data = JSON.parse(text) as Entry[] | { entries: (Entry & { bank_codes: string[] })[] };
  if (Array.isArray(data)) return data;
  return data.entries.flatMap(({ bank_codes, ...e }) => bank_codes.map((bank_code) => ({ ...e, bank_code })));
}

const normalise = (bic: string) => {
  const b = bic.trim().toUpperCase();
  return b.length === 8 ? `${b}XXX` : b;
};

/** schwifty's own choice among several BICs of one bank code: primary first, then the generic (XXX) one. */
function choose(candidates: Entry[]): Entry {
  const withBic = candidates.filter((e) => e.bic !== '');
  const ranked = [...(withBic.length > 0 ? withBic : candidates)].sort((a, b) => Number(b.primary === true) - Number(a.primary === true));
  const generic = ranked.filter((e) => e.bic.endsWith('XXX')).sort((a, b) => (a.bic < b.bic ? -1 : 1));
  return ranked.length > 1 && generic.length > 0 ? generic[generic.length - 1] : ranked[0];
}

/** Not a bank's name: a code the national bank marks free or unavailable (BE "VRIJ", "Onbeschikbaar"), one letter. */
const PLACEHOLDER = /^(.|onbeschikbaar|vrij|libre|indisponible|non attribu[eé])$/iu;
const nameOf = (e: Entry) => [e.short_name, e.name].map((n) => (n ?? '').trim()).find((n) => n !== '' && !PLACEHOLDER.test(n)) ?? '';

/**
 * The bank code's own name: from its entry whose BIC the fewest bank codes of the country share. A regional bank
 * is listed twice, under its own branch BIC and under its group's generic one with the group head's name
 * (FR 11425: CEPAFRPP142 "Caisse d'Epargne ... Normandie" and CEPAFRPPXXX "Caisse d'Epargne CEPAC"): the
 * generic BIC may be the one chosen, its name is not this bank's.
 */
function ownName(candidates: Entry[], chosen: Entry, codesOfBic: ReadonlyMap<string, number>): string {
  const named = candidates.filter((e) => nameOf(e) !== '');
  const spread = (e: Entry) => (e.bic === '' ? Number.MAX_SAFE_INTEGER : (codesOfBic.get(e.bic) ?? 0));
  // Equally specific entries (30003: SOGEFRPP "Societe Generale" and SOGEFRPPHPO a subsidiary): the chosen one.
  const best = [...named].sort((a, b) => spread(a) - spread(b) || Number(b === chosen) - Number(a === chosen))[0];
  return best ? nameOf(best) : '';
}

/** BIC -> how many bank codes of the table list it (among all their entries, chosen or not). */
function codesPerBic(table: Map<string, { entries: Entry[] }>): Map<string, number> {
  const count = new Map<string, number>();
  for (const { entries } of table.values()) for (const bic of new Set(entries.map((e) => e.bic))) count.set(bic, (count.get(bic) ?? 0) + 1);
  return count;
}

const commit = git('rev-parse', 'HEAD').trim();
const files = git('ls-tree', '--name-only', 'HEAD', `${REGISTRY}/`).split('\n').filter((f) => f.endsWith('.json')).sort();
/** country -> bank code -> candidates; manual files (sorted after generated ones) replace generated entries. */
const tables = new Map<string, Map<string, { manual: boolean; entries: Entry[] }>>();
const dates = new Map<string, { date: string; files: string[] }>();
for (const file of files) {
  const manual = file.includes('/manual_');
  const date = git('log', '-1', '--format=%cs', 'HEAD', '--', file).trim();
  for (const e of entriesOf(git('show', `HEAD:${file}`))) {
    const country = e.country_code;
    const given = normalise(e.bic ?? '');
    const bic = BIC.test(given) ? given : '';
    if (SKIP.has(country) || !e.bank_code || (bic === '' && nameOf(e) === '')) continue;
    const table = tables.get(country) ?? new Map();
    tables.set(country, table);
    const slot = table.get(e.bank_code);
    const entry = { ...e, bic };
    if (!slot || (manual && !slot.manual)) table.set(e.bank_code, { manual, entries: [entry] });
    else if (slot.manual === manual) slot.entries.push(entry);
    const seen = dates.get(country) ?? { date: '', files: [] };
    if (!seen.files.includes(file)) seen.files.push(file);
    if (date > seen.date) seen.date = date;
    dates.set(country, seen);
  }
}

mkdirSync(outDir, { recursive: true });
for (const f of readdirSync(outDir)) if (/^[A-Z]{2}\.json$/.test(f)) unlinkSync(join(outDir, f));
const notice: string[] = [
  'National bank code -> BIC tables (data/banks/<CC>.json)',
  '======================================================',
  '',
  `Source:    schwifty's bank registry, https://github.com/mdomke/schwifty (schwifty/bank_registry/*.json),`,
  `           commit ${commit}, converted by scripts/build-bank-tables.ts: one BIC per bank code`,
  '           (schwifty\'s own choice: primary entry first, then the generic XXX BIC; "" when the code has none)',
  '           and the code\'s own name (short form; from its entry with the least-shared BIC, not the group',
  '           head\'s name its generic BIC carries).',
  'Licence:   MIT (LICENSE-schwifty), Copyright (c) 2021 Martin Domke.',
  'Date:      per country below: when schwifty last changed the file (git log), not when the national source',
  '           published it. generated_* files are built by schwifty from the national source named; manual_*',
  '           files are curated by schwifty\'s contributors.',
  '',
  'CC  date        codes  schwifty file(s); national source',
];
let total = 0;
for (const country of [...tables.keys()].sort()) {
  const banks: Record<string, [string, string]> = {};
  const spread = codesPerBic(tables.get(country)!);
  for (const [code, slot] of [...tables.get(country)!].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const chosen = choose(slot.entries);
    banks[code] = [chosen.bic, ownName(slot.entries, chosen, spread)];
  }
  const { date, files: from } = dates.get(country)!;
  const body = { country, source: `schwifty ${commit.slice(0, 12)}: ${from.join(', ')}`, licence: 'MIT', date, banks };
  writeFileSync(join(outDir, `${country}.json`), `${JSON.stringify(body)}\n`);
  total += Object.keys(banks).length;
  const generated = from.some((f) => f.includes('/generated_'));
  const origin = generated ? `; ${ORIGIN[country] ?? 'generated (schwifty publishes no generator script for it)'}` : '; curated';
  notice.push(`${country}  ${date}  ${String(Object.keys(banks).length).padStart(5)}  ${from.map((f) => f.slice(REGISTRY.length + 1)).join(', ')}${origin}`);
}
writeFileSync(join(outDir, 'NOTICE'), `${notice.join('\n')}\n`);
writeFileSync(join(outDir, 'LICENSE-schwifty'), git('show', 'HEAD:LICENSE'));
process.stderr.write(`build-bank-tables: ${tables.size} countries, ${total} bank codes from schwifty ${commit.slice(0, 12)}\n`);
