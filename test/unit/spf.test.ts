// SPF parsing (RFC 7208) and include/redirect analysis with the lookup limit.
import { describe, expect, it } from 'vitest';
import { analyseSpf } from '../../src/domain/spf-analysis.js';
import { parseSpf, spfTerms } from '../../src/domain/spf.js';

const hasWarning = (warnings: string[], part: string): boolean => warnings.some((w) => w.includes(part));

describe('parseSpf: record selection', () => {
  it('reports absence when no TXT string is an SPF record', () => {
    expect(parseSpf(['google-site-verification=abc', 'v=spf10 -all'])).toEqual({
      present: false,
      rawRecord: '',
      qualifier: '',
      mechanisms: [],
      dnsLookups: 0,
      warnings: ['no SPF record found'],
    });
  });

  it.each(['v=spf1 -all', 'V=SPF1 -all', 'v=spf1'])('accepts %j as an SPF record', (record) => {
    expect(parseSpf(['other', record]).rawRecord).toBe(record);
  });

  it.each(['v=spf1-all', ' v=spf1 -all', 'xv=spf1 -all'])('does not accept %j', (record) => {
    expect(parseSpf([record]).present).toBe(false);
  });

  it('warns about multiple SPF records and analyses the first', () => {
    const r = parseSpf(['v=spf1 ip4:192.0.2.1 -all', 'v=spf1 ~all']);
    expect(r.rawRecord).toBe('v=spf1 ip4:192.0.2.1 -all');
    expect(hasWarning(r.warnings, '2 SPF records')).toBe(true);
  });
});

describe('parseSpf: qualifier', () => {
  it.each([
    ['v=spf1 -all', '-all'],
    ['v=spf1 ~all', '~all'],
    ['v=spf1 ?all', '?all'],
    ['v=spf1 +all', '+all'],
    ['v=spf1 all', '+all'],
    ['v=spf1 ip4:192.0.2.1', '?all'],
    ['v=spf1 redirect=_spf.example.net', '?all'],
    ['v=spf1 mx -ALL', '-all'],
  ])('%s → %s', (record, qualifier) => {
    expect(parseSpf([record]).qualifier).toBe(qualifier);
  });

  it.each(['v=spf1 +all', 'v=spf1 all'])('warns that %s lets anyone send', (record) => {
    expect(hasWarning(parseSpf([record]).warnings, 'lets any host send')).toBe(true);
  });

  it('does not warn about -all', () => {
    expect(parseSpf(['v=spf1 ip4:192.0.2.0/24 -all']).warnings).toEqual([]);
  });
});

describe('parseSpf: mechanisms', () => {
  it('lists every term except all, in order, as written', () => {
    const r = parseSpf(['v=spf1 include:_spf.example.net ip4:192.0.2.0/24  -ip6:2001:db8::/32 a mx:mail.example.com/24 ~all']);
    expect(r.mechanisms).toEqual([
      'include:_spf.example.net',
      'ip4:192.0.2.0/24',
      '-ip6:2001:db8::/32',
      'a',
      'mx:mail.example.com/24',
    ]);
  });

  it('lists modifiers such as redirect= and exp=', () => {
    expect(parseSpf(['v=spf1 ip4:192.0.2.1 redirect=_spf.example.net exp=explain.example.net']).mechanisms).toEqual([
      'ip4:192.0.2.1',
      'redirect=_spf.example.net',
      'exp=explain.example.net',
    ]);
  });

  it('splits terms into qualifier, name and value', () => {
    expect(spfTerms('v=spf1 ~include:x.example a/24 redirect=y.example')).toEqual([
      { kind: 'mechanism', qualifier: '~', name: 'include', value: 'x.example', raw: '~include:x.example' },
      { kind: 'mechanism', qualifier: '+', name: 'a', value: '/24', raw: 'a/24' },
      { kind: 'modifier', qualifier: '+', name: 'redirect', value: 'y.example', raw: 'redirect=y.example' },
    ]);
  });
});

describe('parseSpf: warnings', () => {
  it.each([
    ['v=spf1 ptr -all', 'ptr mechanism'],
    ['v=spf1 ptr:example.com -all', 'ptr mechanism'],
    ['v=spf1 foo:bar -all', "unknown mechanism 'foo:bar'"],
    ['v=spf1 ip4:300.1.1.1 -all', 'invalid IPv4'],
    ['v=spf1 ip4:192.0.2.0/33 -all', 'invalid IPv4'],
    ['v=spf1 ip6:zz::1 -all', 'invalid IPv6'],
    ['v=spf1 include: -all', 'needs a domain'],
    ['v=spf1 -all ip4:192.0.2.1', 'never evaluated'],
    ['v=spf1 redirect=a.example redirect=b.example', 'redirect= modifier appears more than once'],
    ['v=spf1 redirect=a.example -all', 'redirect= is ignored'],
    ['v=spf1 a/33 -all', "'a/33': invalid domain or prefix length"],
    ['v=spf1 mx//129 -all', "'mx//129': invalid domain or prefix length"],
    ['v=spf1 a: -all', "'a:': invalid domain or prefix length"],
    ['v=spf1 ~MX:/24 -all', "'~MX:/24': invalid domain or prefix length"],
    ['v=spf1 mx:example.com/24/8 -all', 'invalid domain or prefix length'],
  ])('%s warns about %s', (record, part) => {
    expect(hasWarning(parseSpf([record]).warnings, part)).toBe(true);
  });

  it('counts DNS-querying terms and warns beyond 10', () => {
    const terms = Array.from({ length: 11 }, (_, i) => `include:s${i}.example`).join(' ');
    const r = parseSpf([`v=spf1 ${terms} -all`]);
    expect(r.dnsLookups).toBe(11);
    expect(hasWarning(r.warnings, 'exceed the limit of 10')).toBe(true);
  });

  it.each(['v=spf1 a mx a:mail.example.com mx:example.com/24 a/24//64 mx//48 a:example.com//128 -all', 'v=spf1 a/0 mx/32 ~all'])(
    'accepts the a/mx forms of %s without warnings',
    (record) => {
      expect(parseSpf([record]).warnings).toEqual([]);
    },
  );

  it.each([
    ['v=spf1 redirect=a.example -all', 0],
    ['v=spf1 include:a.example -all include:b.example a', 1],
    ['v=spf1 include:a.example exp=explain.example redirect=b.example', 2],
  ])('counts only the terms evaluation reaches in %s (RFC 7208 §6.1, §4.6.4)', (record, want) => {
    expect(parseSpf([record]).dnsLookups).toBe(want);
  });

  it('counts include, a, mx, ptr, exists and redirect but not ip4, ip6 or all', () => {
    expect(parseSpf(['v=spf1 include:x.example a mx ptr exists:y.example ip4:192.0.2.1 ip6:::1 redirect=z.example']).dnsLookups).toBe(6);
  });
});

describe('analyseSpf', () => {
  const lookupIn =
    (zone: Record<string, string[]>, seen: string[] = []) =>
    async (name: string): Promise<string[]> => {
      seen.push(name);
      return zone[name] ?? [];
    };

  it('takes the qualifier of a redirect target when the record has no all', async () => {
    const r = await analyseSpf(
      'example.com',
      lookupIn({ 'example.com': ['v=spf1 redirect=_spf.example.net'], '_spf.example.net': ['v=spf1 ip4:192.0.2.0/24 -all'] }),
    );
    expect(r.qualifier).toBe('-all');
    expect(r.mechanisms).toEqual(['redirect=_spf.example.net']);
  });

  it('follows chained redirects', async () => {
    const r = await analyseSpf(
      'example.com',
      lookupIn({
        'example.com': ['v=spf1 redirect=a.example'],
        'a.example': ['v=spf1 redirect=b.example'],
        'b.example': ['v=spf1 ~all'],
      }),
    );
    expect(r.qualifier).toBe('~all');
    expect(r.dnsLookups).toBe(2);
  });

  it('keeps ?all and warns when the redirect target has no SPF record', async () => {
    const r = await analyseSpf('example.com', lookupIn({ 'example.com': ['v=spf1 redirect=none.example'] }));
    expect(r.qualifier).toBe('?all');
    expect(hasWarning(r.warnings, 'none.example has no SPF record')).toBe(true);
  });

  it('counts DNS-querying terms through nested includes', async () => {
    const r = await analyseSpf(
      'example.com',
      lookupIn({
        'example.com': ['v=spf1 include:a.example mx -all'],
        'a.example': ['v=spf1 include:b.example a ~all'],
        'b.example': ['v=spf1 ip4:192.0.2.1 exists:x.example ?all'],
      }),
    );
    expect(r.dnsLookups).toBe(5);
    expect(r.warnings).toEqual([]);
    expect(r.qualifier).toBe('-all');
  });

  it('warns when includes take the count beyond 10', async () => {
    const zone: Record<string, string[]> = { 'example.com': ['v=spf1 include:a.example include:b.example -all'] };
    zone['a.example'] = [`v=spf1 ${Array.from({ length: 5 }, (_, i) => `include:a${i}.example`).join(' ')} ~all`];
    zone['b.example'] = [`v=spf1 ${Array.from({ length: 5 }, (_, i) => `a:b${i}.example`).join(' ')} ~all`];
    for (let i = 0; i < 5; i++) zone[`a${i}.example`] = ['v=spf1 ip4:192.0.2.1 ~all'];
    const r = await analyseSpf('example.com', lookupIn(zone));
    expect(r.dnsLookups).toBeGreaterThan(10);
    expect(hasWarning(r.warnings, 'exceed the limit of 10')).toBe(true);
  });

  it('neither counts nor follows what comes after all, nor a redirect beside it', async () => {
    const seen: string[] = [];
    const r = await analyseSpf(
      'example.com',
      lookupIn({ 'example.com': ['v=spf1 include:a.example -all include:late.example redirect=r.example'], 'a.example': ['v=spf1 mx ~all'] }, seen),
    );
    expect(r.dnsLookups).toBe(2);
    expect(seen).toEqual(['example.com', 'a.example']);
    expect(r.qualifier).toBe('-all');
  });

  it('stops at an include loop and warns', async () => {
    const seen: string[] = [];
    const r = await analyseSpf(
      'example.com',
      lookupIn(
        {
          'example.com': ['v=spf1 include:a.example -all'],
          'a.example': ['v=spf1 include:example.com ~all'],
        },
        seen,
      ),
    );
    expect(hasWarning(r.warnings, 'loops back to example.com')).toBe(true);
    expect(seen).toEqual(['example.com', 'a.example']);
  });

  it('warns about an include without an SPF record', async () => {
    const r = await analyseSpf('example.com', lookupIn({ 'example.com': ['v=spf1 include:gone.example -all'] }));
    expect(hasWarning(r.warnings, 'gone.example has no SPF record')).toBe(true);
  });

  it('turns a failed include lookup into a warning', async () => {
    const r = await analyseSpf('example.com', async (name) => {
      if (name === 'example.com') return ['v=spf1 include:broken.example -all'];
      throw new Error('upstream');
    });
    expect(r.present).toBe(true);
    expect(hasWarning(r.warnings, 'lookup of broken.example failed')).toBe(true);
  });

  it('does not follow macro targets', async () => {
    const seen: string[] = [];
    const r = await analyseSpf('example.com', lookupIn({ 'example.com': ['v=spf1 include:%{i}._spf.example -all'] }, seen));
    expect(seen).toEqual(['example.com']);
    expect(hasWarning(r.warnings, 'uses macros')).toBe(true);
  });

  it('rejects when the lookup of the domain itself fails', async () => {
    await expect(
      analyseSpf('example.com', async () => {
        throw new Error('upstream');
      }),
    ).rejects.toThrow('upstream');
  });

  it('returns the absent result when the domain has no SPF record', async () => {
    const r = await analyseSpf('example.com', lookupIn({}));
    expect(r).toMatchObject({ present: false, qualifier: '', mechanisms: [] });
  });
});
