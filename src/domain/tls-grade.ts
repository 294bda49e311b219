// TLS grading (A+ to F) from certificate validity, protocol, cipher suite (IANA names), key and signature algorithm.

export type TlsGrade = 'A+' | 'A' | 'B' | 'C' | 'F';

export interface GradeInput {
  /** Chain trusted AND host name matches AND now within the validity period. */
  valid: boolean;
  /** Human-readable reasons the certificate is not valid (empty when valid). */
  validityProblems: string[];
  daysUntilExpiry: number | null;
  /** 'TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1', 'SSLv3'. */
  protocol: string | null;
  /** IANA/RFC name, e.g. 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'. */
  cipherSuite: string | null;
  /** 'RSA', 'RSA-PSS', 'EC', 'Ed25519', 'Ed448', 'DSA'... */
  keyAlgorithm: string | null;
  keySize: number | null;
  signatureAlgorithm: string | null;
}

export interface GradeResult {
  grade: TlsGrade;
  warnings: string[];
}

/** Thresholds (days until expiry, as whole days rounded down). */
export const GRADE_RULES = {
  /** C at or below this many days. */
  criticalExpiryDays: 7,
  /** B at or below this many days. */
  nearExpiryDays: 30,
  /** A+ needs more than this many days. */
  aPlusMinDays: 90,
  minRsaBits: 2048,
} as const;

const PROTOCOL_RANK: Record<string, number> = { SSLv2: 0, SSLv3: 1, TLSv1: 2, 'TLSv1.1': 3, 'TLSv1.2': 4, 'TLSv1.3': 5 };

/** Rank of a protocol name; unknown names rank lowest. */
export function protocolRank(protocol: string | null): number {
  return protocol !== null && protocol in PROTOCOL_RANK ? PROTOCOL_RANK[protocol] : -1;
}

/**
 * Weaknesses of a cipher suite as negotiated with a protocol, as human-readable reasons; empty when
 * strong. Weak = no forward secrecy (static RSA/DH/ECDH, PSK without (EC)DHE, anonymous), 3DES, RC4,
 * DES, export or NULL ciphers, or a bulk key under 128 bits. CBC is not weak by itself: below TLS 1.2 every
 * suite but RC4 is CBC, and INTERFACE.md grades an older protocol B, not C (the protocol rule says so).
 */
export function cipherWeaknesses(cipherSuite: string, protocol: string | null): string[] {
  const s = cipherSuite.toUpperCase();
  const out: string[] = [];
  const tls13 = protocol === 'TLSv1.3' || /^TLS_(AES|CHACHA20|SM4)_/.test(s);
  if (/_NULL_|_WITH_NULL|NULL_WITH/.test(s)) out.push('no encryption (NULL cipher)');
  if (/EXPORT/.test(s)) out.push('export-grade cipher');
  if (/RC4/.test(s)) out.push('RC4 cipher');
  if (/3DES|DES_EDE/.test(s)) out.push('3DES cipher');
  else if (/_DES(40)?_/.test(s)) out.push('DES cipher');
  if (/_anon_/i.test(cipherSuite) || /^TLS_(DH|ECDH)_ANON/.test(s)) out.push('anonymous key exchange (no authentication)');
  if (!tls13) {
    const kx = /^(?:TLS|SSL)_(.*?)_WITH_/.exec(s)?.[1] ?? '';
    const forwardSecret = /^(ECDHE|DHE)(_|$)/.test(kx);
    if (kx !== '' && !forwardSecret) out.push('no forward secrecy');
  }
  if (/_(40|56|64)_|RC2|_DES_CBC_/.test(s) && !out.includes('export-grade cipher')) out.push('key under 128 bits');
  return out;
}

/** Strong AEAD: AES-GCM, ChaCha20-Poly1305 or AES-CCM (not CCM_8), with forward secrecy. */
export function isStrongAead(cipherSuite: string, protocol: string | null): boolean {
  const s = cipherSuite.toUpperCase();
  return /(_GCM_|CHACHA20_POLY1305|_CCM(_SHA|$))/.test(s) && !/CCM_8/.test(s) && cipherWeaknesses(s, protocol).length === 0;
}

const WEAK_SIGNATURE = /^(MD2|MD4|MD5|SHA1)with/i;

/**
 * Grade: F when not valid; otherwise C when expiring within 7 days, a weak cipher, an RSA key
 * under 2048 bits or a SHA-1 (or MD5) signature; B when expiring within 30 days or a protocol below
 * TLS 1.2; A+ when TLS 1.3 with a strong AEAD cipher and more than 90 days left; A otherwise.
 * Every condition that keeps a valid certificate below A adds a warning; an invalid one lists its
 * validity problems first, then any other weakness.
 */
export function gradeTls(input: GradeInput): GradeResult {
  const warnings: string[] = [...input.validityProblems];
  let c = false;
  let b = false;
  const days = input.daysUntilExpiry;
  if (input.valid && days !== null) {
    if (days <= GRADE_RULES.criticalExpiryDays) {
      c = true;
      warnings.push(days <= 0 ? 'certificate expires today' : `certificate expires in ${days} day${days === 1 ? '' : 's'}`);
    } else if (days <= GRADE_RULES.nearExpiryDays) {
      b = true;
      warnings.push(`certificate expires in ${days} days`);
    }
  }
  if (input.cipherSuite) {
    const weak = cipherWeaknesses(input.cipherSuite, input.protocol);
    if (weak.length > 0) {
      c = true;
      warnings.push(`weak cipher suite ${input.cipherSuite}: ${weak.join(', ')}`);
    }
  }
  const rsa = input.keyAlgorithm === 'RSA' || input.keyAlgorithm === 'RSA-PSS';
  if (rsa && input.keySize !== null && input.keySize < GRADE_RULES.minRsaBits) {
    c = true;
    warnings.push(`RSA key of ${input.keySize} bits is under ${GRADE_RULES.minRsaBits} bits`);
  }
  if (input.signatureAlgorithm && WEAK_SIGNATURE.test(input.signatureAlgorithm)) {
    c = true;
    warnings.push(`certificate signature uses a broken hash (${input.signatureAlgorithm})`);
  }
  if (input.protocol && protocolRank(input.protocol) < PROTOCOL_RANK['TLSv1.2']) {
    b = true;
    warnings.push(`protocol ${input.protocol} is older than TLSv1.2`);
  }
  if (!input.valid) return { grade: 'F', warnings };
  if (c) return { grade: 'C', warnings };
  if (b) return { grade: 'B', warnings };
  const aPlus =
    input.protocol === 'TLSv1.3' &&
    input.cipherSuite !== null &&
    isStrongAead(input.cipherSuite, input.protocol) &&
    days !== null &&
    days > GRADE_RULES.aPlusMinDays;
  return { grade: aPlus ? 'A+' : 'A', warnings };
}

/** Signature algorithm OIDs → Java-style names. */
const SIGNATURE_ALGORITHMS: Record<string, string> = {
  '1.2.840.113549.1.1.2': 'MD2withRSA',
  '1.2.840.113549.1.1.4': 'MD5withRSA',
  '1.2.840.113549.1.1.5': 'SHA1withRSA',
  '1.2.840.113549.1.1.10': 'RSASSA-PSS',
  '1.2.840.113549.1.1.11': 'SHA256withRSA',
  '1.2.840.113549.1.1.12': 'SHA384withRSA',
  '1.2.840.113549.1.1.13': 'SHA512withRSA',
  '1.2.840.113549.1.1.14': 'SHA224withRSA',
  '1.3.14.3.2.29': 'SHA1withRSA',
  '1.2.840.10045.4.1': 'SHA1withECDSA',
  '1.2.840.10045.4.3.1': 'SHA224withECDSA',
  '1.2.840.10045.4.3.2': 'SHA256withECDSA',
  '1.2.840.10045.4.3.3': 'SHA384withECDSA',
  '1.2.840.10045.4.3.4': 'SHA512withECDSA',
  '1.2.840.10040.4.3': 'SHA1withDSA',
  '2.16.840.1.101.3.4.3.1': 'SHA224withDSA',
  '2.16.840.1.101.3.4.3.2': 'SHA256withDSA',
  '2.16.840.1.101.3.4.3.9': 'SHA3-224withECDSA',
  '2.16.840.1.101.3.4.3.10': 'SHA3-256withECDSA',
  '2.16.840.1.101.3.4.3.11': 'SHA3-384withECDSA',
  '2.16.840.1.101.3.4.3.12': 'SHA3-512withECDSA',
  '2.16.840.1.101.3.4.3.13': 'SHA3-224withRSA',
  '2.16.840.1.101.3.4.3.14': 'SHA3-256withRSA',
  '2.16.840.1.101.3.4.3.15': 'SHA3-384withRSA',
  '2.16.840.1.101.3.4.3.16': 'SHA3-512withRSA',
  '1.3.101.112': 'Ed25519',
  '1.3.101.113': 'Ed448',
  '1.2.156.10197.1.501': 'SM3withSM2',
};

/** Name of a signature algorithm OID (e.g. SHA256withRSA); the dotted OID itself when unknown. */
export function signatureAlgorithmName(oid: string): string {
  return SIGNATURE_ALGORITHMS[oid] ?? oid;
}
