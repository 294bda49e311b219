// TLS inspection against real local TLS servers: refusal of non-public targets, chains, grades, failures (RFC 5280, RFC 6797).
// @module-tag slow (left out of make test-fast): makes many TLS handshakes
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/adapters/dns/resolver.js';
import { createTlsProber, type TlsProberOptions, type TlsResult } from '../../src/adapters/tls/prober.js';
import { addressResolver } from '../../src/adapters/tls/target-guard.js';
import { InvalidTarget, RefusedTarget, UpstreamFailure } from '../../src/errors.js';
import { fetchIssuer } from '../../src/adapters/tls/aia-fetch.js';
import { asApiError } from '../../src/error-answers.js';
import { id_kp_clientAuth } from '@peculiar/asn1-x509';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import {
  DAY,
  type Issued,
  closedPort,
  createTestPki,
  issue,
  startSilentServer,
  startTlsServer,
  type IssueOptions,
  type TlsServerOptions,
} from '../support/tls-fixtures.js';
import { waitFor } from '../support/wait.js';

// Certificates are dated relative to T0 and the prober's clock is fixed at T0: day counts are exact.
const T0 = Math.floor(Date.now() / 1000) * 1000;
const at = (days: number, hours = 0): Date => new Date(T0 + days * DAY + hours * 3_600_000);
const pki = createTestPki('Test');
const foreign = createTestPki('Foreign');
const HSTS = 'max-age=31536000';
/** Connections one inspection makes: the full handshake plus one probe each for TLS 1.2, 1.1 and 1.0. */
const PER_INSPECTION = 4;

const names = [
  'good.test', 'www.good.test', 'tls12.test', 'tls10.test', 'static-rsa.test', 'rsa1024.test', 'sha1.test', 'near.test',
  'soon.test', 'sixty.test', 'nohsts.test', 'expired.test', 'future.test', 'selfsigned.test', 'wronghost.test',
  'untrusted.test', 'incomplete.test', 'direct.test', 'pinned.test', 'any.test', 'clientonly.test', 'noeku.test',
  'constrained.test', 'allowed.test', 'deep.test', 'aia.test', 'fetched.test',
];
const zone: Zone = {
  ...Object.fromEntries(names.map((n) => [n, [{ type: 'A' as const, data: '127.0.0.1' }]])),
  'mapped.test': [{ type: 'AAAA', data: '::ffff:127.0.0.1' }],
  'loop6.test': [{ type: 'AAAA', data: '::1' }],
  'zero.test': [{ type: 'A', data: '0.0.0.0' }],
  'mixed.test': [{ type: 'A', data: '127.0.0.1' }, { type: 'AAAA', data: '2001:4860:4860::8888' }],
  'textonly.test': [{ type: 'TXT', data: 'no addresses here' }],
};

let dns: TestDnsServer;
let resolve: (name: string) => Promise<string[]>;

beforeAll(async () => {
  dns = await startDnsServer(zone);
  resolve = addressResolver(createDnsResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 5000, cacheEntries: 0 }));
});
afterAll(async () => {
  await dns.close();
});

function leafFor(host: string, o: Partial<IssueOptions> = {}) {
  return pki.leaf({ subject: [['C', 'DE'], ['O', 'Good Org'], ['CN', host]], dnsNames: [host], notBefore: at(-1), notAfter: at(365), ...o });
}

function proberFor(port: number, extra: Partial<TlsProberOptions> = {}) {
  return createTlsProber({ resolve, port, timeoutMs: 2000, allowPrivate: true, extraCaPem: pki.root.certPem, now: () => new Date(T0), ...extra });
}

/** Serve `server`, inspect `domain` through the test DNS server, stop the server. */
async function inspectOn(server: TlsServerOptions, domain: string, extra: Partial<TlsProberOptions> = {}): Promise<TlsResult> {
  const srv = await startTlsServer(server);
  try {
    return await proberFor(srv.port, extra).inspect(domain);
  } finally {
    await srv.close();
  }
}

const serve = (l: { chainPem?: string; certPem: string; keyPem: string }, o: Partial<TlsServerOptions> = {}): TlsServerOptions => ({
  cert: l.chainPem ?? l.certPem,
  key: l.keyPem,
  hsts: HSTS,
  ...o,
});

const CERT_FIELDS = ['issuer', 'subject', 'serialNumber', 'validFrom', 'validTo', 'daysUntilExpiry', 'signatureAlgorithm', 'subjectAlternativeNames', 'protocol', 'cipherSuite', 'chainLength', 'keyAlgorithm', 'keySize', 'hsts'] as const;

describe('TLS inspection of a valid certificate', () => {
  const leaf = leafFor('good.test', { dnsNames: ['good.test', 'www.good.test'] });
  let r: TlsResult;
  beforeAll(async () => {
    r = await inspectOn(serve(leaf), 'good.test');
  });

  it('is valid with grade A+ and no warnings', () => {
    expect(r).toMatchObject({ domain: 'good.test', valid: true, grade: 'A+', warnings: [], errorMessage: null });
  });

  it('reports issuer and subject as RFC 4514 names', () => {
    expect(r.issuer).toBe('CN=Test Intermediate CA, O=Test Trust, C=DE');
    expect(r.subject).toBe('CN=good.test, O=Good Org, C=DE');
  });

  it('reports the serial number in upper-case hex', () => {
    expect(r.serialNumber).toBe(leaf.cert.serialNumber.toUpperCase());
    expect(r.serialNumber).toMatch(/^[0-9A-F]+$/);
  });

  it('reports ISO 8601 dates and whole days to expiry', () => {
    expect(r.validFrom).toBe(at(-1).toISOString());
    expect(r.validTo).toBe(at(365).toISOString());
    expect(r.daysUntilExpiry).toBe(365);
  });

  it('reports SAN DNS names, signature and key algorithms', () => {
    expect(r.subjectAlternativeNames).toEqual(['good.test', 'www.good.test']);
    expect(r.signatureAlgorithm).toBe('SHA256withECDSA');
    expect(r.keyAlgorithm).toBe('EC');
    expect(r.keySize).toBe(256);
  });

  it('reports the negotiated protocol and the IANA cipher suite name', () => {
    expect(r.protocol).toBe('TLSv1.3');
    expect(r.cipherSuite).toBe('TLS_AES_256_GCM_SHA384');
  });

  it('counts the chain from leaf to root, the root included', () => {
    expect(r.chainLength).toBe(3);
  });

  it('sees the Strict-Transport-Security header', () => {
    expect(r.hsts).toBe(true);
  });
});

describe('TLS inspection: each certificate and server case', () => {
  const rsaLeaf = leafFor('static-rsa.test', { keyType: 'rsa2048' });
  it.each([
    ['TLS 1.2 only', 'tls12.test', serve(leafFor('tls12.test'), { maxVersion: 'TLSv1.2' }), { valid: true, grade: 'A', protocol: 'TLSv1.2', cipherSuite: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' }, []],
    ['60 days left', 'sixty.test', serve(leafFor('sixty.test', { notAfter: at(60, 1) })), { valid: true, grade: 'A', daysUntilExpiry: 60 }, []],
    ['20 days left', 'near.test', serve(leafFor('near.test', { notAfter: at(20, 1) })), { valid: true, grade: 'B', daysUntilExpiry: 20 }, ['certificate expires in 20 days']],
    ['3 days left', 'soon.test', serve(leafFor('soon.test', { notAfter: at(3, 1) })), { valid: true, grade: 'C', daysUntilExpiry: 3 }, ['certificate expires in 3 days']],
    [
      'TLS 1.0 with a forward-secret CBC suite: the older protocol gives B',
      'tls10.test',
      serve(leafFor('tls10.test'), { minVersion: 'TLSv1', maxVersion: 'TLSv1' }),
      { valid: true, grade: 'B', protocol: 'TLSv1', cipherSuite: 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA' },
      ['protocol TLSv1 is older than TLSv1.2'],
    ],
    [
      'static RSA key exchange',
      'static-rsa.test',
      serve(rsaLeaf, { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256:@SECLEVEL=0' }),
      { valid: true, grade: 'C', cipherSuite: 'TLS_RSA_WITH_AES_128_GCM_SHA256', keyAlgorithm: 'RSA', keySize: 2048 },
      ['weak cipher suite TLS_RSA_WITH_AES_128_GCM_SHA256: no forward secrecy'],
    ],
    ['RSA 1024 key', 'rsa1024.test', serve(leafFor('rsa1024.test', { keyType: 'rsa1024' })), { valid: true, grade: 'C', keyAlgorithm: 'RSA', keySize: 1024 }, ['RSA key of 1024 bits is under 2048 bits']],
    ['SHA-1 signature', 'sha1.test', serve(leafFor('sha1.test', { hash: 'sha1' })), { valid: true, grade: 'C', signatureAlgorithm: 'SHA1withECDSA' }, ['certificate signature uses a broken hash (SHA1withECDSA)']],
    ['no HTTP answer within the HSTS budget', 'nohsts.test', { ...serve(leafFor('nohsts.test')), http: false }, { valid: true, hsts: null }, []],
    ['no HSTS header: A, not A+', 'nohsts.test', serve(leafFor('nohsts.test'), { hsts: undefined }), { valid: true, grade: 'A', hsts: false, hstsMaxAge: null }, []],
    ['HSTS under 180 days: A, not A+', 'nohsts.test', serve(leafFor('nohsts.test'), { hsts: 'max-age=15551999; includeSubDomains' }), { valid: true, grade: 'A', hsts: true, hstsMaxAge: 15551999 }, []],
    ['HSTS of exactly 180 days: A+', 'nohsts.test', serve(leafFor('nohsts.test'), { hsts: 'max-age="15552000"' }), { valid: true, grade: 'A+', hsts: true, hstsMaxAge: 15552000 }, []],
    ['leaf signed by the root', 'direct.test', serve(issue({ subject: [['CN', 'direct.test']], dnsNames: ['direct.test'], issuer: pki.root, notBefore: at(-1), notAfter: at(365) })), { valid: true, chainLength: 2 }, []],
  ])('%s', async (_name, domain, server, expected, warnings) => {
    // Only the server that never answers HTTP gets a short HSTS budget (its outcome, null, is the same however the
    // machine runs); the others get the default: under load 200 ms ran out before their HSTS answer was read.
    const r = await inspectOn(server, domain, server.http === false ? { hstsTimeoutMs: 200 } : {});
    expect(r).toMatchObject({ ...expected, errorMessage: null });
    expect(r.warnings).toEqual(warnings);
  });

  it.each([
    ['expired', 'expired.test', serve(leafFor('expired.test', { notBefore: at(-100), notAfter: at(-2) })), { daysUntilExpiry: -2, chainLength: 3 }, `certificate expired on ${at(-2).toISOString()}`],
    ['not yet valid', 'future.test', serve(leafFor('future.test', { notBefore: at(10), notAfter: at(400) })), { daysUntilExpiry: 400 }, `certificate is not valid before ${at(10).toISOString()}`],
    [
      'self-signed',
      'selfsigned.test',
      serve(issue({ subject: [['CN', 'selfsigned.test']], dnsNames: ['selfsigned.test'], notBefore: at(-1), notAfter: at(365) })),
      { chainLength: 1, issuer: 'CN=selfsigned.test', subject: 'CN=selfsigned.test' },
      'certificate is self-signed',
    ],
    ['wrong host', 'wronghost.test', serve(leafFor('other.test')), { subjectAlternativeNames: ['other.test'] }, 'certificate does not match host name wronghost.test'],
    [
      'an untrusted CA',
      'untrusted.test',
      serve(foreign.leaf({ subject: [['CN', 'untrusted.test']], dnsNames: ['untrusted.test'], notBefore: at(-1), notAfter: at(365) })),
      { chainLength: 2, issuer: 'CN=Foreign Intermediate CA, O=Foreign Trust, C=DE' },
      'certificate chain is not trusted: the issuer of Foreign Intermediate CA is unknown (incomplete or untrusted chain)',
    ],
    [
      'a missing intermediate',
      'incomplete.test',
      { cert: leafFor('incomplete.test').certPem, key: leafFor('incomplete.test').keyPem, hsts: HSTS },
      { chainLength: 1 },
      'certificate chain is not trusted: the issuer of incomplete.test is unknown (incomplete or untrusted chain)',
    ],
  ])('%s → F with the reason, fields still reported', async (_name, domain, server, expected, problem) => {
    const r = await inspectOn(server, domain);
    expect(r).toMatchObject({ ...expected, valid: false, grade: 'F', errorMessage: problem });
    expect(r.warnings).toEqual([problem]);
    expect(r.serialNumber).toMatch(/^[0-9A-F]+$/);
    expect(r.protocol).toBe('TLSv1.3');
  });

  it('trusts a certificate from the extra CA bundle (TLS_EXTRA_CA_FILE), here a pinned self-signed Ed25519 one', async () => {
    const pinned = issue({ subject: [['CN', 'pinned.test']], dnsNames: ['pinned.test'], keyType: 'ed25519', notBefore: at(-1), notAfter: at(365) });
    const r = await inspectOn(serve(pinned), 'pinned.test', { extraCaPem: pki.root.certPem + pinned.certPem });
    expect(r).toMatchObject({ valid: true, chainLength: 1, signatureAlgorithm: 'Ed25519', keyAlgorithm: 'Ed25519', keySize: 256, grade: 'A+' });
  });

  it('does not trust the test CA without the extra CA bundle', async () => {
    const r = await inspectOn(serve(leafFor('good.test')), 'good.test', { extraCaPem: undefined });
    expect(r.valid).toBe(false);
    expect(r.errorMessage).toMatch(/^certificate chain is not trusted/);
  });

  it('inspects an IP literal without DNS, matching the IP SAN', async () => {
    const before = dns.queries.length;
    const r = await inspectOn(serve(leafFor('ip', { dnsNames: [], ipAddresses: ['127.0.0.1'] })), '127.0.0.1');
    expect(r).toMatchObject({ domain: '127.0.0.1', valid: true, ocspStapled: false });
    expect(dns.queries.length).toBe(before);
  });
});

function expectFailure(r: TlsResult, message: RegExp): void {
  expect(r).toMatchObject({ valid: false, grade: 'F', warnings: [] });
  expect(r.errorMessage).toMatch(message);
  for (const f of CERT_FIELDS) expect(r[f], f).toBeNull();
}

describe('TLS inspection: RFC 5280 path validation beyond signatures and dates', () => {
  const sub = (name: string, o: Partial<IssueOptions>, issuer: Issued = pki.root): Issued =>
    issue({ subject: [['CN', name]], ca: true, issuer, freshKey: true, notBefore: at(-10), notAfter: at(1000), ...o });
  const leafUnder = (ca: Issued, host: string, o: Partial<IssueOptions> = {}, extra = '') => {
    const l = issue({ subject: [['CN', host]], dnsNames: [host], issuer: ca, notBefore: at(-1), notAfter: at(365), ...o });
    return { ...l, chainPem: l.certPem + ca.certPem + extra };
  };
  const constrained = sub('Constrained CA', { permittedDns: ['allowed.test'] });
  const pathLenZero = sub('Path Length 0 CA', { pathLen: 0 });
  const belowPathLenZero = sub('Below Path Length 0 CA', {}, pathLenZero);

  it.each([
    ['a leaf for client authentication only', 'clientonly.test', leafUnder(pki.intermediate, 'clientonly.test', { extKeyUsage: [id_kp_clientAuth] }), 'the certificate is not issued for TLS server authentication (extended key usage)'],
    ["a leaf outside its issuer's name constraints", 'constrained.test', leafUnder(constrained, 'constrained.test'), "the chain fails path validation (RFC 5280: an issuer's key usage, name constraints or a critical extension)"],
    ['a CA below a path length 0 CA', 'deep.test', leafUnder(belowPathLenZero, 'deep.test', {}, pathLenZero.certPem), "the chain is longer than an issuer's path length constraint allows"],
  ])('%s → F: OpenSSL and RFC 5280 refuse the path', async (_name, domain, leaf, problem) => {
    const r = await inspectOn(serve(leaf), domain);
    expect(r).toMatchObject({ valid: false, grade: 'F', errorMessage: `certificate chain is not trusted: ${problem}` });
  });

  it('a leaf without extended key usage may serve TLS (RFC 5280 4.2.1.12)', async () => {
    const r = await inspectOn(serve(leafUnder(pki.intermediate, 'noeku.test', { extKeyUsage: [] })), 'noeku.test');
    expect(r).toMatchObject({ valid: true, errorMessage: null, chainLength: 3 });
  });

  it('a leaf inside its issuer\'s name constraints is valid', async () => {
    const r = await inspectOn(serve(leafUnder(constrained, 'allowed.test')), 'allowed.test');
    expect(r).toMatchObject({ valid: true, errorMessage: null, chainLength: 3 });
  });
});

describe('TLS inspection: connection failures are F results', () => {
  it('connection refused', async () => {
    const port = await closedPort();
    expectFailure(await proberFor(port).inspect('good.test'), /^connection refused by 127\.0\.0\.1:\d+$/);
  });

  it('a server that never completes the handshake: F after the timeout', async () => {
    const silent = await startSilentServer();
    try {
      const r = await proberFor(silent.port, { timeoutMs: 300 }).inspect('good.test');
      expectFailure(r, /^no TLS handshake with 127\.0\.0\.1:\d+ within 300 ms$/);
      // After a stall longer than 300 ms the timers run before this process's server accepts: wait for the accepts.
      await waitFor(() => silent.connections() === PER_INSPECTION, { what: `${PER_INSPECTION} connections (seen ${silent.connections()} at first)` });
      expect(silent.connections()).toBe(PER_INSPECTION);
    } finally {
      await silent.close();
    }
  });

  it('a server that does not speak TLS', async () => {
    const plain: Server = createServer((s) => {
      s.on('error', () => undefined);
      s.resume();
      s.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (plain.address() as { port: number }).port;
      const r = await proberFor(port).inspect('good.test');
      expectFailure(r, /^127\.0\.0\.1:\d+ did not answer with TLS$/);
      expect(r.errorMessage).not.toMatch(/routines|openssl|error:|\.\.\//i);
    } finally {
      await new Promise<void>((r) => plain.close(() => r()));
    }
  });

  it('a server with no cipher suite in common', async () => {
    const leaf = leafFor('good.test');
    const r = await inspectOn(serve(leaf, { maxVersion: 'TLSv1.2', ciphers: 'NULL-SHA256:@SECLEVEL=0' }), 'good.test');
    expectFailure(r, /^127\.0\.0\.1:\d+ refused the handshake: no cipher suite in common$/);
  });

  it('no such domain', async () => {
    const port = await closedPort();
    expectFailure(await proberFor(port).inspect('missing.test'), /^no such domain: missing\.test$/);
  });

  it('a name without addresses', async () => {
    const port = await closedPort();
    expectFailure(await proberFor(port).inspect('textonly.test'), /^textonly\.test has no A or AAAA records$/);
  });

  it('a failing DNS server is an upstream error, not a result', async () => {
    const broken = await startDnsServer(zone, { mode: 'servfail' });
    try {
      const prober = createTlsProber({
        resolve: addressResolver(createDnsResolver({ servers: [{ host: '127.0.0.1', port: broken.port }], timeoutMs: 500 })),
        port: 443,
        timeoutMs: 500,
        allowPrivate: true,
      });
      const err = await prober.inspect('good.test').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamFailure);
      expect(asApiError(err)).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE' });
    } finally {
      await broken.close();
    }
  });
});

describe('TLS inspection: non-public targets are refused without connecting', () => {
  const leaf = leafFor('any.test');

  it.each(['any.test', 'mapped.test', 'loop6.test', 'zero.test', 'mixed.test', '127.0.0.1', '[::1]', '::ffff:127.0.0.1', '2130706433', '0x7f.1', '0177.0.0.1', '127.1'])(
    '%s → 400 VALIDATION_ERROR, no connection',
    async (domain) => {
      const srv = await startTlsServer(serve(leaf));
      try {
        const err = await proberFor(srv.port, { allowPrivate: false }).inspect(domain).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RefusedTarget);
        expect(asApiError(err)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: [{ field: 'domain' }] });
        expect((err as RefusedTarget).message).toMatch(/non-public address/);
        expect(srv.connections()).toBe(0);
      } finally {
        await srv.close();
      }
    },
  );

  it('the same target is inspected when ALLOW_PRIVATE_TARGETS is on (one inspection)', async () => {
    const srv = await startTlsServer(serve(leaf));
    try {
      const r = await proberFor(srv.port, { allowPrivate: true }).inspect('any.test');
      expect(r.valid).toBe(true);
      expect(srv.connections()).toBe(PER_INSPECTION);
    } finally {
      await srv.close();
    }
  });

  it.each(['not a domain', 'http://x.test/', 'single', 'a..test'])('%j → 400 INVALID_FORMAT before any DNS query', async (domain) => {
    const before = dns.queries.length;
    const err = await proberFor(1).inspect(domain).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidTarget);
    expect(asApiError(err)).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'domain' }] });
    expect(dns.queries.length).toBe(before);
  });
});

describe('TLS inspection: result cache', () => {
  const leaf = leafFor('good.test', { dnsNames: ['good.test', 'www.good.test'] });

  it('answers a repeated domain from the cache without connecting', async () => {
    const srv = await startTlsServer(serve(leaf));
    try {
      const prober = proberFor(srv.port);
      const first = await prober.inspect('good.test');
      const second = await prober.inspect('GOOD.test.');
      expect(second).toEqual(first);
      expect(srv.connections()).toBe(PER_INSPECTION);
      expect(prober.stats()).toMatchObject({ cacheHits: 1, cacheMisses: 1, cacheEntries: 1, connections: PER_INSPECTION });
    } finally {
      await srv.close();
    }
  });

  it('coalesces concurrent inspections of one domain', async () => {
    const srv = await startTlsServer(serve(leaf));
    try {
      const prober = proberFor(srv.port);
      const results = await Promise.all([prober.inspect('good.test'), prober.inspect('good.test'), prober.inspect('good.test')]);
      expect(new Set(results.map((r) => r.serialNumber)).size).toBe(1);
      expect(srv.connections()).toBe(PER_INSPECTION);
    } finally {
      await srv.close();
    }
  });

  it('is bounded: with room for one entry, alternating domains reconnect', async () => {
    const srv = await startTlsServer(serve(leaf));
    try {
      const prober = proberFor(srv.port, { cacheEntries: 1 });
      for (const d of ['good.test', 'www.good.test', 'good.test']) await prober.inspect(d);
      expect(srv.connections()).toBe(3 * PER_INSPECTION);
    } finally {
      await srv.close();
    }
  });

  it('caches connection failures too', async () => {
    const port = await closedPort();
    const prober = proberFor(port);
    await prober.inspect('good.test');
    await prober.inspect('good.test');
    expect(prober.stats()).toMatchObject({ cacheHits: 1, connections: PER_INSPECTION });
  });
});

describe('TLS inspection: the configuration, one rule at a time (docs/tls-grading.md)', () => {
  const support = (...accepted: Array<boolean | null>) =>
    ['TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1'].map((protocol, i) => ({ protocol, accepted: accepted[i] }));

  it('a TLS 1.2/1.3 server: 1.1 and 1.0 refused, forward secrecy and AEAD, A+', async () => {
    const r = await inspectOn(serve(leafFor('good.test')), 'good.test');
    expect(r).toMatchObject({ grade: 'A+', protocolSupport: support(true, true, false, false), forwardSecrecy: true, aead: true, warnings: [] });
  });

  it('accepting TLS 1.0 and 1.1 besides 1.3 caps at B, with a warning', async () => {
    const r = await inspectOn(serve(leafFor('tls10.test'), { minVersion: 'TLSv1' }), 'tls10.test');
    expect(r).toMatchObject({ valid: true, grade: 'B', protocol: 'TLSv1.3', protocolSupport: support(true, true, true, true) });
    expect(r.warnings).toEqual(['the server also accepts TLSv1.1 and TLSv1, older than TLSv1.2']);
  });

  it('accepting TLS 1.1 only besides 1.2 caps at B, naming just that version', async () => {
    const r = await inspectOn(serve(leafFor('tls12.test'), { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.2' }), 'tls12.test');
    expect(r).toMatchObject({ grade: 'B', protocol: 'TLSv1.2', protocolSupport: support(false, true, true, false) });
    expect(r.warnings).toEqual(['the server also accepts TLSv1.1, older than TLSv1.2']);
  });

  it('a TLS 1.0-only server: the negotiated-protocol warning, the version not repeated', async () => {
    const r = await inspectOn(serve(leafFor('tls10.test'), { minVersion: 'TLSv1', maxVersion: 'TLSv1' }), 'tls10.test');
    expect(r).toMatchObject({ grade: 'B', protocolSupport: support(false, false, false, true) });
    expect(r.warnings).toEqual(['protocol TLSv1 is older than TLSv1.2']);
  });

  it('a CBC suite on TLS 1.2: no AEAD, A at most, no warning', async () => {
    const r = await inspectOn(serve(leafFor('tls12.test'), { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256:@SECLEVEL=0' }), 'tls12.test');
    expect(r).toMatchObject({ grade: 'A', cipherSuite: 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', forwardSecrecy: true, aead: false, warnings: [] });
  });

  it('static RSA key exchange: no forward secrecy, C', async () => {
    const r = await inspectOn(serve(leafFor('static-rsa.test', { keyType: 'rsa2048' }), { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256:@SECLEVEL=0' }), 'static-rsa.test');
    expect(r).toMatchObject({ grade: 'C', forwardSecrecy: false, aead: true });
  });

  it('OCSP stapling: seen when the server staples, false otherwise; not graded', async () => {
    const stapled = await inspectOn(serve(leafFor('good.test'), { ocspResponse: Buffer.from('a stapled response') }), 'good.test');
    const plain = await inspectOn(serve(leafFor('good.test')), 'good.test');
    expect(stapled).toMatchObject({ ocspStapled: true, grade: 'A+' });
    expect(plain).toMatchObject({ ocspStapled: false, grade: 'A+' });
  });

  it('certificate transparency: SCTs embedded in the leaf are seen; not graded', async () => {
    const withSct = await inspectOn(serve(leafFor('good.test', { embeddedSct: true })), 'good.test');
    const without = await inspectOn(serve(leafFor('good.test')), 'good.test');
    expect(withSct).toMatchObject({ sctPresent: true, grade: 'A+' });
    expect(without).toMatchObject({ sctPresent: false, grade: 'A+' });
  });

  it('a failed connection reports none of the configuration', async () => {
    const r = await proberFor(await closedPort()).inspect('good.test');
    expect(r).toMatchObject({ protocolSupport: null, forwardSecrecy: null, aead: null, ocspStapled: null, sctPresent: null, hstsMaxAge: null });
  });
});

describe('TLS inspection: an incomplete chain (SSL Labs caps it at B)', () => {
  let aia: ReturnType<typeof createHttpServer>;
  let aiaPort = 0;
  let fetches = 0;
  beforeAll(async () => {
    aia = createHttpServer((req, res) => {
      fetches++;
      if (req.url === '/int.cer') res.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(pki.intermediate.cert.raw);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => aia.listen(0, '127.0.0.1', () => r()));
    aiaPort = (aia.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => aia.close(() => r())));

  it('a missing intermediate that the caIssuers URL provides: valid, chainComplete false, B with a warning', async () => {
    const leaf = leafFor('fetched.test', { caIssuersUrl: `http://aia.test:${aiaPort}/int.cer` });
    const before = fetches;
    const r = await inspectOn(serve(leaf, { cert: leaf.certPem }), 'fetched.test');
    expect(r).toMatchObject({ valid: true, errorMessage: null, chainComplete: false, chainLength: 3, grade: 'B' });
    expect(r.warnings).toEqual(['incomplete chain: the server does not send an intermediate certificate; clients that cannot fetch it fail']);
    expect(fetches).toBe(before + 1);
  });

  it('a caIssuers URL that gives nothing leaves the chain untrusted: F', async () => {
    const leaf = leafFor('fetched.test', { caIssuersUrl: `http://aia.test:${aiaPort}/missing.cer` });
    const r = await inspectOn(serve(leaf, { cert: leaf.certPem }), 'fetched.test');
    expect(r).toMatchObject({ valid: false, grade: 'F', chainComplete: null });
  });

  it('the caIssuers host is fetched under the inspection guard: not at all when non-public and not allowed', async () => {
    const url = `http://aia.test:${aiaPort}/int.cer`;
    const before = fetches;
    expect(await fetchIssuer({ resolve, allowPrivate: false }, url, 1000)).toBeNull();
    expect(fetches).toBe(before);
    const cert = await fetchIssuer({ resolve, allowPrivate: true }, url, 1000);
    expect(cert?.fingerprint256).toBe(pki.intermediate.cert.fingerprint256);
    expect(fetches).toBe(before + 1);
  });

  it('a complete chain says so', async () => {
    const r = await inspectOn(serve(leafFor('good.test')), 'good.test');
    expect(r.chainComplete).toBe(true);
  });
});
