// DMARC record parsing (RFC 7489): policy, subdomain policy, reporting address, warnings.
import { describe, expect, it } from 'vitest';
import { appliedPolicy, firstMailto, parseDmarc } from '../../src/domain/dmarc.js';
import { analyseBimiRecords } from '../../src/domain/bimi.js';

const hasWarning = (warnings: string[], part: string): boolean => warnings.some((w) => w.includes(part));

describe('parseDmarc', () => {
  it('reports a missing record with a warning', () => {
    expect(parseDmarc(['v=spf1 -all'])).toEqual({
      present: false,
      rawRecord: '',
      policy: '',
      subdomainPolicy: '',
      reportingEmail: '',
      warnings: ["no DMARC record at _dmarc of this name: receivers use its organisational domain's record instead (RFC 7489 §6.6.3) and apply no DMARC policy when that has none either"],
    });
  });

  it('reads p, sp and the first mailto: of rua', () => {
    const raw = 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:agg@example.com,mailto:other@example.net; pct=100';
    expect(parseDmarc([raw])).toEqual({
      present: true,
      rawRecord: raw,
      policy: 'reject',
      subdomainPolicy: 'quarantine',
      reportingEmail: 'agg@example.com',
      warnings: [],
    });
  });

  it('leaves sp and reportingEmail empty when absent and warns about the missing rua', () => {
    const r = parseDmarc(['v=DMARC1; p=quarantine']);
    expect(r).toMatchObject({ present: true, policy: 'quarantine', subdomainPolicy: '', reportingEmail: '' });
    expect(r.warnings).toEqual(['no rua= tag: no aggregate reports are sent']);
  });

  it.each(['v=DMARC1;p=reject', 'v = DMARC1 ; P = Reject', 'V=DMARC1; p=REJECT;'])('accepts the spelling %j', (raw) => {
    expect(parseDmarc([raw]).policy).toBe('reject');
  });

  it.each(['p=reject; v=DMARC1', 'v=DMARC2; p=reject', 'v=spf1 -all'])('does not take %j as a DMARC record', (raw) => {
    expect(parseDmarc([raw]).present).toBe(false);
  });

  it.each(['v=dmarc1; p=reject', 'v=Dmarc1; p=reject', ' v=DMARC1; p=reject'])('discards %j as receivers do, saying why', (raw) => {
    const r = parseDmarc([raw]);
    expect(r).toMatchObject({ present: false, policy: '' });
    expect(r.warnings).toEqual([
      "no DMARC record at _dmarc of this name: receivers use its organisational domain's record instead (RFC 7489 §6.6.3) and apply no DMARC policy when that has none either",
      `'${raw}' is ignored by receivers: a DMARC record must start with exactly v=DMARC1 (RFC 7489 §6.4)`,
    ]);
  });

  it('warns about p=none', () => {
    expect(hasWarning(parseDmarc(['v=DMARC1; p=none; rua=mailto:a@example.com']).warnings, 'p=none')).toBe(true);
  });

  it('reports an invalid p as empty with a warning', () => {
    const r = parseDmarc(['v=DMARC1; p=block; rua=mailto:a@example.com']);
    expect(r.policy).toBe('');
    expect(hasWarning(r.warnings, 'invalid policy p=block')).toBe(true);
  });

  it('warns about a missing p', () => {
    expect(hasWarning(parseDmarc(['v=DMARC1; rua=mailto:a@example.com']).warnings, 'p= tag is missing')).toBe(true);
  });

  it('reports an invalid sp as empty with a warning', () => {
    const r = parseDmarc(['v=DMARC1; p=reject; sp=maybe; rua=mailto:a@example.com']);
    expect(r.subdomainPolicy).toBe('');
    expect(hasWarning(r.warnings, 'invalid subdomain policy')).toBe(true);
  });

  it('warns about multiple records and analyses the first', () => {
    const r = parseDmarc(['v=DMARC1; p=reject; rua=mailto:a@example.com', 'v=DMARC1; p=none']);
    expect(r.policy).toBe('reject');
    expect(hasWarning(r.warnings, '2 DMARC records')).toBe(true);
  });

  it.each([
    ['pct=50', 'applies to only 50%'],
    ['pct=150', 'invalid pct=150'],
  ])('warns about %s', (tag, part) => {
    expect(hasWarning(parseDmarc([`v=DMARC1; p=reject; rua=mailto:a@example.com; ${tag}`]).warnings, part)).toBe(true);
  });
});

describe('firstMailto', () => {
  it.each([
    ['mailto:agg@example.com', 'agg@example.com'],
    ['MAILTO:agg@example.com!10m', 'agg@example.com'],
    ['https://report.example.com/dmarc, mailto:b@example.com', 'b@example.com'],
    ['mailto:dmarc%2Breports@example.com', 'dmarc+reports@example.com'],
    ['https://report.example.com/dmarc', ''],
    ['', ''],
  ])('%j → %j', (list, expected) => {
    expect(firstMailto(list)).toBe(expected);
  });
});

// RFC 7489 §6.3, §6.6.3: the record of the name itself applies p; the organisational domain's record, read for a name
// under it, applies sp (p when sp is absent). BIMI and the "only monitors" warning judge that policy (issue #43, item 1).
describe('the policy that applies to the queried name', () => {
  const org = (raw: string) => ({ ...parseDmarc([raw]), recordName: '_dmarc.org.test' });

  it.each([
    ['org.test', 'v=DMARC1; p=reject; sp=none', { policy: 'reject', tag: 'p' }],
    ['news.org.test', 'v=DMARC1; p=reject; sp=none', { policy: 'none', tag: 'sp' }],
    ['news.org.test', 'v=DMARC1; p=none; sp=quarantine', { policy: 'quarantine', tag: 'sp' }],
    ['news.org.test', 'v=DMARC1; p=quarantine', { policy: 'quarantine', tag: 'p' }],
    ['News.Org.Test.', 'v=DMARC1; p=reject; sp=none; pct=50', { policy: 'none', tag: 'sp', pct: '50' }],
    ['org.test.', 'v=DMARC1; p=reject; sp=none', { policy: 'reject', tag: 'p' }],
  ])('%s under %s', (domain, raw, expected) => {
    expect(appliedPolicy(org(raw), domain)).toEqual({ pct: undefined, ...expected });
  });

  it('is none without a record', () => {
    expect(appliedPolicy({ ...parseDmarc([]), recordName: '' }, 'news.org.test')).toEqual({ policy: '', tag: 'p', pct: undefined });
  });

  it("warns that sp=none only monitors for a subdomain, and not about p=none when sp enforces", () => {
    expect(parseDmarc(['v=DMARC1; p=reject; sp=none; rua=mailto:a@org.test'], true).warnings).toEqual(['sp=none only monitors: failing mail is still delivered']);
    expect(parseDmarc(['v=DMARC1; p=none; sp=reject; rua=mailto:a@org.test'], true).warnings).toEqual([]);
    expect(parseDmarc(['v=DMARC1; p=none; sp=reject; rua=mailto:a@org.test']).warnings).toEqual(['p=none only monitors: failing mail is still delivered']);
  });

  it("makes BIMI warn under a subdomain's sp=none, naming it", () => {
    const bimi = ['v=BIMI1; l=https://news.org.test/l.svg; a=https://news.org.test/a.pem'];
    expect(analyseBimiRecords(bimi, appliedPolicy(org('v=DMARC1; p=reject; sp=none'), 'news.org.test')).warnings).toEqual([
      "DMARC is not at enforcement for this name: its organisational domain's record applies sp=none to it (BIMI needs quarantine or reject): BIMI logos are not shown",
    ]);
    expect(analyseBimiRecords(bimi, appliedPolicy(org('v=DMARC1; p=reject; sp=none'), 'org.test')).warnings).toEqual([]);
  });
});
