// Agreement of the service's BIC resolution with the national sources (ISO 9362 institution and location: the
// first 8 characters), per country, on the bank codes both know. The national source is schwifty's bank registry
// (built from the national banks' own files), read from a git checkout. docs/data-sources.md reports the result.
//
// Usage: node --import tsx scripts/bank-agreement.ts <schwifty git dir>
import { execFileSync } from 'node:child_process';
import { bankDataByBLZ } from 'bankdata-germany';
import { createRequire } from 'node:module';
import { loadBankDirectory } from '../src/adapters/bank-data/bank-directory.js';

const gitDir = process.argv[2];
if (!gitDir) {
  process.stderr.write('usage: bank-agreement.ts <schwifty git dir>\n');
  process.exit(2);
}
const git = (...a: string[]) => execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8', maxBuffer: 64 << 20 });
interface Entry { country_code: string; bank_code: string; bic: string }
const source = new Map<string, Map<string, Set<string>>>();
for (const f of git('ls-tree', '--name-only', 'HEAD', 'schwifty/bank_registry/').split('\n').filter((x) => x.endsWith('.json'))) {
  const data = JSON.parse(git('show', `HEAD:${f}`)) as Entry[] | { entries: (Entry & { bank_codes: string[] })[] };
  const entries = Array.isArray(data) ? data : data.entries.flatMap(({ bank_codes, ...e }) => bank_codes.map((bank_code) => ({ ...e, bank_code })));
  for (const e of entries) {
    if (!e.bank_code || !e.bic || e.bic.length < 8) continue;
    const c = source.get(e.country_code) ?? new Map<string, Set<string>>();
    source.set(e.country_code, c);
    const set = c.get(e.bank_code) ?? new Set<string>();
    c.set(e.bank_code, set);
    set.add(e.bic.toUpperCase().slice(0, 8));
  }
}

const banks = await loadBankDirectory(new URL('../data/banks', import.meta.url).pathname);
const require = createRequire(import.meta.url);
const ibanToBic = require('iban-to-bic/datasets') as Record<string, Record<string, string>>;
/** The packaged tables alone, measured against the same source: an independent comparison. */
const packaged: Record<string, (code: string) => string | null> = {
  DE: (code) => bankDataByBLZ(code)?.bic ?? null,
  ...Object.fromEntries(['AT', 'BE', 'ES', 'FR', 'LU', 'NL'].map((c) => [c, (code: string) => ibanToBic[c]?.[code] ?? null])),
};

function compare(country: string, resolve: (code: string) => string | null) {
  let both = 0;
  let agree = 0;
  for (const [code, bics] of source.get(country) ?? []) {
    const bic = resolve(code);
    if (bic === null) continue;
    both++;
    if (bics.has(bic.toUpperCase().slice(0, 8))) agree++;
  }
  return { both, agree };
}

const rows: string[] = ['country  both-know  agree  rate'];
let both = 0;
let agree = 0;
let countries = 0;
for (const country of [...source.keys()].sort()) {
  const r = compare(country, (code) => banks.resolveBic(country, code));
  if (r.both === 0) continue;
  countries++;
  both += r.both;
  agree += r.agree;
  rows.push(`${country}       ${String(r.both).padStart(6)}  ${String(r.agree).padStart(6)}  ${((100 * r.agree) / r.both).toFixed(1)}%`);
}
rows.push(`all ${countries} countries: ${agree}/${both} = ${((100 * agree) / both).toFixed(2)}% (first 8 characters equal to a BIC the source lists for the code)`);
rows.push('', 'packaged tables alone (independent of data/banks):');
for (const [country, resolve] of Object.entries(packaged)) {
  const r = compare(country, resolve);
  rows.push(`${country}       ${String(r.both).padStart(6)}  ${String(r.agree).padStart(6)}  ${((100 * r.agree) / r.both).toFixed(1)}%`);
}
process.stdout.write(`${rows.join('\n')}\n`);
