// The service's IBAN verdict against schwifty's own (IBAN(..., validate_bban=True)) on the generated corpus of
// test/fixtures/iban/corpus.ts: every country, valid and mutated, plus 1,200 German IBANs over the bank codes of
// the check-method table. Prints the agreement outside the documented differences (docs/iban-rules.md) and, with
// --write, records schwifty's verdicts in test/fixtures/iban/schwifty-verdicts.json for iban-schwifty.test.ts.
//
// Usage: node --import tsx scripts/compare-schwifty.ts <schwifty git dir> [--write]
// Needs python3 (3.10+) with schwifty's dependencies: on Debian `apt-get install python3-pycountry python3-rstr
// python3-typing-extensions python3-importlib-resources` (no PyPI needed). schwifty's code is taken from the git
// checkout into a temporary directory and run there; nothing of it is kept.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateIban } from '../src/domain/iban.js';
import { germanCheckMethod } from '../src/domain/iban-national.js';
import { corpus } from '../test/fixtures/iban/corpus.js';
import { schwiftyDifference } from '../test/fixtures/iban/schwifty-differences.js';

const [gitDir, ...flags] = process.argv.slice(2);
if (!gitDir) {
  process.stderr.write('usage: compare-schwifty.ts <schwifty git dir> [--write]\n');
  process.exit(2);
}
const python = process.env.PYTHON ?? '/usr/bin/python3';
const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const commit = git('rev-parse', 'HEAD').trim();

// schwifty's package from the checkout, with the package metadata it reads its own version from.
const work = mkdtempSync(join(tmpdir(), 'schwifty-'));
try {
  execFileSync('sh', ['-c', `git --git-dir "$0" archive HEAD schwifty | tar -x -C "$1"`, gitDir, work]);
  mkdirSync(join(work, 'schwifty-0.0.dev0.dist-info'));
  writeFileSync(join(work, 'schwifty-0.0.dev0.dist-info', 'METADATA'), 'Metadata-Version: 2.1\nName: schwifty\nVersion: 0.0.dev0\n');

  const samples = corpus();
  // One IBAN a line in, "1" (valid) or "0" a line out.
  const judge = [
    'import sys',
    'from schwifty import IBAN',
    'for line in sys.stdin:',
    '    try:',
    '        IBAN(line.strip(), validate_bban=True)',
    '        print(1)',
    '    except Exception:',
    '        print(0)',
  ].join('\n');
  const out = execFileSync(python, ['-c', judge], {
    cwd: work,
    env: { ...process.env, PYTHONPATH: work },
    input: samples.map((s) => s.iban).join('\n'),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const theirs = out.trim().split('\n').map((l) => l === '1');
  if (theirs.length !== samples.length) throw new Error(`schwifty answered ${theirs.length} of ${samples.length}`);

  const rows = samples.map((s, i) => {
    const result = validateIban(s.iban, () => null);
    return { ...s, result, ours: result.valid, theirs: theirs[i] };
  });
  const differences = new Map<string, { count: number; disagree: number }>();
  const compared = rows.filter((r) => {
    const why = schwiftyDifference(r.iban, r.result);
    if (why === null) return true;
    const d = differences.get(why) ?? { count: 0, disagree: 0 };
    d.count++;
    if (r.ours !== r.theirs) d.disagree++;
    differences.set(why, d);
    return false;
  });
  const disagreements = compared.filter((r) => r.ours !== r.theirs);
  const rate = 1 - disagreements.length / compared.length;
  const german = compared.filter((r) => r.iban.startsWith('DE'));
  const germanDisagree = german.filter((r) => r.ours !== r.theirs).length;
  console.log(
    `schwifty ${commit.slice(0, 12)}: ${rows.length} IBANs, ${rows.length - compared.length} under documented differences, ` +
      `${compared.length} compared, ${disagreements.length} disagreements, agreement ${(rate * 100).toFixed(2)}% ` +
      `(German: ${german.length} compared, ${germanDisagree} disagreements)`,
  );
  for (const [why, d] of differences) console.log(`  documented: ${why}: ${d.count} IBANs, ${d.disagree} judged differently`);
  const byCountry = new Map<string, number>();
  for (const r of disagreements) {
    const key = r.iban.startsWith('DE') ? `DE method ${germanCheckMethod(r.iban.slice(4, 12)) ?? 'none'}` : r.iban.slice(0, 2);
    byCountry.set(key, (byCountry.get(key) ?? 0) + 1);
  }
  if (byCountry.size > 0) console.log(`  disagreements by country: ${[...byCountry].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const r of disagreements.slice(0, Number(process.env.SHOW ?? 20))) console.log(`  disagree: ${r.iban} (${r.kind}) ours ${r.ours} schwifty ${r.theirs}`);

  if (flags.includes('--write')) {
    const file = 'test/fixtures/iban/schwifty-verdicts.json';
    const body = {
      source: `schwifty ${commit}, IBAN(iban, validate_bban=True) raising or not, run by scripts/compare-schwifty.ts`,
      count: samples.length,
      corpusSha256: createHash('sha256').update(samples.map((x) => x.iban).join('\n')).digest('hex'),
      verdicts: theirs.map((v) => (v ? '1' : '0')).join(''),
    };
    writeFileSync(file, `${JSON.stringify(body, null, 1)}\n`);
    console.log(`wrote ${file}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
