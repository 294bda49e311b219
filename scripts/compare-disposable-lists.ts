// Compares disposable-domain lists from the npm registry on test/fixtures/email/disposable-corpus.ts (docs/adr/0023).
// Usage: node --import tsx scripts/compare-disposable-lists.ts DIR
//   DIR: a node_modules holding the candidates (npm install --ignore-scripts them in a scratch directory first):
//   disposable-email-domains, disposable-email-domains-js, mailchecker, fakefilter, burner-email-providers,
//   disposable-domains, and freemail (whose free list is the second false-positive check).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { POPULAR_EMAIL_DOMAINS } from '../src/domain/popular-mail-domains.js';
import { DISPOSABLE_CORPUS, NOT_DISPOSABLE_CORPUS } from '../test/fixtures/email/disposable-corpus.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: compare-disposable-lists.ts NODE_MODULES_DIR');
const require = createRequire(join(dir, 'x.js'));
const text = (p: string) => readFileSync(join(dir, p), 'utf8');
const lines = (p: string) => text(p).split('\n').map((l) => l.trim().toLowerCase()).filter((l) => l && !l.startsWith('#'));

interface Candidate {
  name: string;
  /** The domains as a set, and whether a subdomain of a listed domain counts (the package's own lookup does so). */
  load(): { domains: Set<string>; subdomains: boolean };
}
const CANDIDATES: Candidate[] = [
  { name: 'disposable-email-domains', load: () => ({ domains: new Set([...JSON.parse(text('disposable-email-domains/index.json')), ...JSON.parse(text('disposable-email-domains/wildcard.json'))]), subdomains: true }) },
  { name: 'disposable-email-domains-js', load: () => ({ domains: new Set(JSON.parse(text('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json'))), subdomains: true }) },
  { name: 'mailchecker', load: () => ({ domains: new Set([...(require('mailchecker/platform/node').blacklist() as Set<string>)]), subdomains: true }) },
  { name: 'fakefilter', load: () => ({ domains: new Set(Object.keys(JSON.parse(text('fakefilter/json/data.json')).domains)), subdomains: true }) },
  { name: 'burner-email-providers', load: () => ({ domains: new Set(lines('burner-email-providers/emails.txt')), subdomains: false }) },
  { name: 'disposable-domains', load: () => ({ domains: new Set(JSON.parse(text('disposable-domains/index.json'))), subdomains: true }) },
];

const listed = (domains: Set<string>, subdomains: boolean, d: string) => {
  if (domains.has(d)) return true;
  if (!subdomains) return false;
  for (let i = d.indexOf('.'); i >= 0; i = d.indexOf('.', i + 1)) if (domains.has(d.slice(i + 1))) return true;
  return false;
};
const negatives = [...new Set([...NOT_DISPOSABLE_CORPUS, ...POPULAR_EMAIL_DOMAINS])];
const free = existsSync(join(dir, 'freemail/data/free.txt')) ? lines('freemail/data/free.txt') : [];
const pkg = (n: string) => JSON.parse(text(`${n}/package.json`)) as { version: string; license: string };

console.log('| package | version | licence | domains | corpus hits | misses | false positives (real providers) | on freemail free list |');
console.log('|---|---|---|---|---|---|---|---|');
for (const c of CANDIDATES) {
  if (!existsSync(join(dir, c.name))) continue;
  const { domains, subdomains } = c.load();
  const hits = DISPOSABLE_CORPUS.filter((d) => listed(domains, subdomains, d));
  const misses = DISPOSABLE_CORPUS.filter((d) => !hits.includes(d));
  const fps = negatives.filter((d) => listed(domains, subdomains, d));
  const onFree = free.filter((d) => domains.has(d));
  const p = pkg(c.name);
  console.log(`| ${c.name} | ${p.version} | ${p.license} | ${domains.size} | ${hits.length}/${DISPOSABLE_CORPUS.length} | ${misses.join(' ') || '-'} | ${fps.join(' ') || 'none'} | ${onFree.length} |`);
}
