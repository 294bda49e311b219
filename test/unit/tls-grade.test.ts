// TLS grading (docs/tls-grading.md; openapi.yaml's grade scale): validity, expiry, protocol, cipher suite, key and signature.
import { describe, expect, it } from 'vitest';
import { cipherWeaknesses, gradeTls, hasForwardSecrecy, isAead, isStrongAead, RULES, signatureAlgorithmName, type GradeInput } from '../../src/domain/tls-grade.js';

const strong: GradeInput = {
  valid: true,
  validityProblems: [],
  daysUntilExpiry: 200,
  protocol: 'TLSv1.3',
  cipherSuite: 'TLS_AES_256_GCM_SHA384',
  keyAlgorithm: 'EC',
  keySize: 256,
  signatureAlgorithm: 'SHA256withECDSA',
  acceptedProtocols: ['TLSv1.3', 'TLSv1.2'],
  hstsMaxAge: 31_536_000,
};

describe('gradeTls', () => {
  it('A+ for a valid certificate, TLS 1.3, AEAD, more than 90 days and HSTS of 180 days or more', () => {
    expect(gradeTls(strong)).toEqual({ grade: 'A+', warnings: [] });
  });

  it.each([
    ['exactly 90 days left', { daysUntilExpiry: 90 }],
    ['TLS 1.2 with ECDHE and GCM', { protocol: 'TLSv1.2', cipherSuite: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' }],
    ['TLS 1.2 with ECDHE and CBC', { protocol: 'TLSv1.2', cipherSuite: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256' }],
    ['TLS 1.3 with CCM_8', { cipherSuite: 'TLS_AES_128_CCM_8_SHA256' }],
    ['31 days left', { daysUntilExpiry: 31 }],
    ['no HSTS header', { hstsMaxAge: null }],
    ['HSTS max-age one second under 180 days', { hstsMaxAge: 15_551_999 }],
    ['HSTS not probed (old callers)', { hstsMaxAge: undefined }],
  ])('A without warnings: %s', (_name, change) => {
    expect(gradeTls({ ...strong, ...change })).toEqual({ grade: 'A', warnings: [] });
  });

  it.each([
    ['30 days left', { daysUntilExpiry: 30 }, 'certificate expires in 30 days'],
    ['8 days left', { daysUntilExpiry: 8 }, 'certificate expires in 8 days'],
    ['TLS 1.1 (suite itself strong)', { protocol: 'TLSv1.1', cipherSuite: 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256' }, 'protocol TLSv1.1 is older than TLSv1.2'],
    ['TLS 1.0 with a forward-secret CBC suite', { protocol: 'TLSv1', cipherSuite: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA' }, 'protocol TLSv1 is older than TLSv1.2'],
    ['an incomplete chain', { chainComplete: false }, 'incomplete chain: the server does not send an intermediate certificate; clients that cannot fetch it fail'],
    ['TLS 1.3 negotiated, TLS 1.0 also accepted', { acceptedProtocols: ['TLSv1.3', 'TLSv1.2', 'TLSv1'] }, 'the server also accepts TLSv1, older than TLSv1.2'],
    ['TLS 1.3 negotiated, TLS 1.1 also accepted', { acceptedProtocols: ['TLSv1.3', 'TLSv1.1'] }, 'the server also accepts TLSv1.1, older than TLSv1.2'],
  ])('B: %s', (_name, change, warning) => {
    expect(gradeTls({ ...strong, ...change })).toEqual({ grade: 'B', warnings: [warning] });
  });

  it.each([
    ['7 days left', { daysUntilExpiry: 7 }, 'certificate expires in 7 days'],
    ['1 day left', { daysUntilExpiry: 1 }, 'certificate expires in 1 day'],
    ['less than a day left', { daysUntilExpiry: 0 }, 'certificate expires today'],
    ['static RSA key exchange', { protocol: 'TLSv1.2', cipherSuite: 'TLS_RSA_WITH_AES_128_GCM_SHA256' }, 'weak cipher suite TLS_RSA_WITH_AES_128_GCM_SHA256: no forward secrecy'],
    ['static ECDH key exchange', { protocol: 'TLSv1.2', cipherSuite: 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256' }, 'weak cipher suite TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256: no forward secrecy'],
    ['RSA key of 1024 bits', { keyAlgorithm: 'RSA', keySize: 1024 }, 'RSA key of 1024 bits is under 2048 bits'],
    ['SHA-1 signature', { signatureAlgorithm: 'SHA1withRSA' }, 'certificate signature uses a broken hash (SHA1withRSA)'],
    ['MD5 signature', { signatureAlgorithm: 'MD5withRSA' }, 'certificate signature uses a broken hash (MD5withRSA)'],
  ])('C: %s', (_name, change, warning) => {
    expect(gradeTls({ ...strong, ...change })).toEqual({ grade: 'C', warnings: [warning] });
  });

  it('C with every reason listed when several apply', () => {
    const r = gradeTls({ ...strong, protocol: 'TLSv1', cipherSuite: 'TLS_RSA_WITH_AES_128_CBC_SHA', daysUntilExpiry: 20 });
    expect(r.grade).toBe('C');
    expect(r.warnings).toEqual([
      'certificate expires in 20 days',
      'weak cipher suite TLS_RSA_WITH_AES_128_CBC_SHA: no forward secrecy',
      'protocol TLSv1 is older than TLSv1.2',
    ]);
  });

  it('a negotiated old protocol is not repeated among the accepted ones', () => {
    const r = gradeTls({ ...strong, protocol: 'TLSv1.1', cipherSuite: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', acceptedProtocols: ['TLSv1.1', 'TLSv1'] });
    expect(r).toEqual({ grade: 'B', warnings: ['protocol TLSv1.1 is older than TLSv1.2', 'the server also accepts TLSv1, older than TLSv1.2'] });
  });

  it('every rule of the table has an id, and each id once', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(['expiry', 'weak-cipher', 'rsa-key', 'signature', 'incomplete-chain', 'negotiated-protocol', 'accepted-protocols', 'tls13-aead', 'hsts']);
  });

  it('an ECDSA key is not held to the RSA size rule', () => {
    expect(gradeTls({ ...strong, keyAlgorithm: 'EC', keySize: 256 }).grade).toBe('A+');
  });

  it('F for an invalid certificate, its problems first, other weaknesses after', () => {
    const r = gradeTls({ ...strong, valid: false, validityProblems: ['certificate is self-signed'], keyAlgorithm: 'RSA', keySize: 1024 });
    expect(r).toEqual({ grade: 'F', warnings: ['certificate is self-signed', 'RSA key of 1024 bits is under 2048 bits'] });
  });

  it('F does not add expiry warnings for an expired certificate', () => {
    const r = gradeTls({ ...strong, valid: false, validityProblems: ['certificate expired on 2020-01-01T00:00:00.000Z'], daysUntilExpiry: -30 });
    expect(r).toEqual({ grade: 'F', warnings: ['certificate expired on 2020-01-01T00:00:00.000Z'] });
  });
});

describe('cipherWeaknesses', () => {
  it.each([
    ['TLS_AES_128_GCM_SHA256', 'TLSv1.3', []],
    ['TLS_CHACHA20_POLY1305_SHA256', 'TLSv1.3', []],
    ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLSv1.2', []],
    ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLSv1.2', []],
    ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'TLSv1.1', []],
    ['TLS_RSA_WITH_AES_256_CBC_SHA', 'TLSv1', ['no forward secrecy']],
    ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLSv1.2', ['3DES cipher', 'no forward secrecy']],
    ['TLS_ECDHE_RSA_WITH_RC4_128_SHA', 'TLSv1.2', ['RC4 cipher']],
    ['TLS_RSA_WITH_DES_CBC_SHA', 'TLSv1.2', ['DES cipher', 'no forward secrecy', 'key under 128 bits']],
    ['TLS_RSA_EXPORT_WITH_RC4_40_MD5', 'TLSv1', ['export-grade cipher', 'RC4 cipher', 'no forward secrecy']],
    ['TLS_RSA_WITH_NULL_SHA256', 'TLSv1.2', ['no encryption (NULL cipher)', 'no forward secrecy']],
    ['TLS_DH_anon_WITH_AES_128_GCM_SHA256', 'TLSv1.2', ['anonymous key exchange (no authentication)', 'no forward secrecy']],
    ['TLS_PSK_WITH_AES_128_GCM_SHA256', 'TLSv1.2', ['no forward secrecy']],
    ['TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256', 'TLSv1.2', []],
  ])('%s over %s → %j', (suite, protocol, expected) => {
    expect(cipherWeaknesses(suite, protocol)).toEqual(expected);
  });
});

describe('forward secrecy and AEAD of the negotiated suite', () => {
  it.each([
    ['TLS_AES_128_GCM_SHA256', 'TLSv1.3', true, true],
    ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLSv1.2', true, false],
    ['TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLSv1.2', true, true],
    ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLSv1.2', false, true],
    ['TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'TLSv1.2', true, true],
    ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', 'TLSv1', false, false],
  ])('%s over %s: forward secrecy %s, AEAD %s', (suite, protocol, fs, aead) => {
    expect(hasForwardSecrecy(suite, protocol)).toBe(fs);
    expect(isAead(suite)).toBe(aead);
  });
});

describe('isStrongAead', () => {
  it.each([
    ['TLS_AES_256_GCM_SHA384', 'TLSv1.3', true],
    ['TLS_CHACHA20_POLY1305_SHA256', 'TLSv1.3', true],
    ['TLS_AES_128_CCM_SHA256', 'TLSv1.3', true],
    ['TLS_AES_128_CCM_8_SHA256', 'TLSv1.3', false],
    ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'TLSv1.2', false],
    ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'TLSv1.2', false],
  ])('%s over %s → %s', (suite, protocol, expected) => {
    expect(isStrongAead(suite, protocol)).toBe(expected);
  });
});

describe('signatureAlgorithmName', () => {
  it.each([
    ['1.2.840.113549.1.1.11', 'SHA256withRSA'],
    ['1.2.840.113549.1.1.12', 'SHA384withRSA'],
    ['1.2.840.113549.1.1.5', 'SHA1withRSA'],
    ['1.2.840.113549.1.1.10', 'RSASSA-PSS'],
    ['1.2.840.10045.4.3.2', 'SHA256withECDSA'],
    ['1.2.840.10045.4.3.3', 'SHA384withECDSA'],
    ['1.2.840.10045.4.1', 'SHA1withECDSA'],
    ['1.3.101.112', 'Ed25519'],
    ['1.3.101.113', 'Ed448'],
    ['1.2.3.4.5', '1.2.3.4.5'],
  ])('%s → %s', (oid, name) => {
    expect(signatureAlgorithmName(oid)).toBe(name);
  });
});
