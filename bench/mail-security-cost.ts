// What the mail-security blocks beyond SPF/DKIM/DMARC cost one cold DNS analysis: DNS questions asked and wall time of
// analyseMailSecurity against the SPF/DKIM/DMARC work it runs beside, on a loopback DNS server (docs/adr/0017).
// Run: node --import tsx bench/mail-security-cost.ts [--rounds 30]
import { parseArgs } from 'node:util';
import { createDnsResolver } from '../src/adapters/dns/resolver.js';
import { DKIM_SELECTORS, dkimName } from '../src/domain/dkim.js';
import { analyseMailSecurity } from '../src/domain/mail-security.js';
import { analyseSpf } from '../src/domain/spf-analysis.js';
import { startDnsServer } from '../test/support/dns-server.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const rounds = Number(values.rounds);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const D = 'mail.bench.test';
const dns = await startDnsServer({
  [D]: [{ type: 'TXT', data: 'v=spf1 include:_spf.bench.test -all' }, { type: 'MX', data: { preference: 10, exchange: `mx.${D}` } }],
  '_spf.bench.test': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' }],
  '_dmarc.bench.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:d@bench.test' }],
  [`selector1._domainkey.${D}`]: [{ type: 'TXT', data: 'v=DKIM1; p=MIGf' }],
  [`_smtp._tls.${D}`]: [{ type: 'TXT', data: 'v=TLSRPTv1; rua=mailto:t@bench.test' }],
  'bench.test': [{ type: 'CAA', data: { tag: 'issue', value: 'ca.example' } }],
});
const fetchMtaStsPolicy = async () => ({ ok: false as const, reason: 'not published' });
const base: number[] = [];
const extra: number[] = [];
let baseQueries = 0;
let extraQueries = 0;
for (let i = 0; i < rounds; i++) {
  // A resolver without a cache: every round is a cold analysis.
  const resolver = createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 2000, cacheEntries: 0 });
  const txt = (n: string) => resolver.query(n, 'TXT').then((a) => a.records.map((r) => r.value));
  dns.queries.length = 0;
  let t = performance.now();
  await Promise.all([analyseSpf(D, txt), txt(`_dmarc.${D}`), ...DKIM_SELECTORS.map((s) => txt(dkimName(s, D)))]);
  base.push(performance.now() - t);
  baseQueries = dns.queries.length;
  dns.queries.length = 0;
  t = performance.now();
  await analyseMailSecurity({ txt, query: (n, type) => resolver.query(n, type), fetchMtaStsPolicy }, D);
  extra.push(performance.now() - t);
  extraQueries = dns.queries.length;
}
await dns.close();
console.log(
  `rounds ${rounds}: SPF/DKIM/DMARC ${baseQueries} questions, p50 ${median(base).toFixed(1)} ms; ` +
    `the new blocks ${extraQueries} questions, p50 ${median(extra).toFixed(1)} ms (run beside it, not after it)`,
);
