// TLS grading (A+ to F) as one rule table (docs/tls-grading.md, after SSL Labs' SSL Server Rating Guide): certificate, protocols, suite, key, HSTS (RFC 6797).

type TlsGrade = 'A+' | 'A' | 'B' | 'C' | 'F';

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
  /** false: the server left out an intermediate that had to be fetched (caIssuers); null/absent: not known. */
  chainComplete?: boolean | null;
  /** Protocols a handshake limited to that one version succeeded with; null when not probed. */
  acceptedProtocols?: string[] | null;
  /** max-age of the Strict-Transport-Security header in seconds; null when absent or not determined. */
  hstsMaxAge?: number | null;
}

export interface GradeResult {
  grade: TlsGrade;
  warnings: string[];
}

/** Thresholds (days until expiry, as whole days rounded down). */
const GRADE_RULES = {
  /** C at or below this many days. */
  criticalExpiryDays: 7,
  /** B at or below this many days. */
  nearExpiryDays: 30,
  /** A+ needs more than this many days. */
  aPlusMinDays: 90,
  minRsaBits: 2048,
  /** A+ needs HSTS with at least this max-age: 6 months (180 days), as SSL Labs asks. */
  hstsMinMaxAge: 15_552_000,
} as const;

const PROTOCOL_RANK: Record<string, number> = { SSLv2: 0, SSLv3: 1, TLSv1: 2, 'TLSv1.1': 3, 'TLSv1.2': 4, 'TLSv1.3': 5 };

/** Rank of a protocol name; unknown names rank lowest. */
function protocolRank(protocol: string | null): number {
  return protocol !== null && protocol in PROTOCOL_RANK ? PROTOCOL_RANK[protocol] : -1;
}

/**
 * Weaknesses of a cipher suite as negotiated with a protocol, as human-readable reasons; empty when
 * strong. Weak = no forward secrecy (static RSA/DH/ECDH, PSK without (EC)DHE, anonymous), 3DES, RC4,
 * DES, export or NULL ciphers, or a bulk key under 128 bits. CBC is not weak by itself: below TLS 1.2 every
 * suite but RC4 is CBC, and the contract's grade scale (openapi.yaml TlsResult.grade) grades an older protocol B, not C (the protocol rule says so).
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

/** The negotiated suite gives forward secrecy: TLS 1.3, or an (EC)DHE key exchange. */
export function hasForwardSecrecy(cipherSuite: string, protocol: string | null): boolean {
  return !cipherWeaknesses(cipherSuite, protocol).some((w) => w === 'no forward secrecy' || w.startsWith('anonymous'));
}

/** The negotiated suite is an AEAD: GCM, ChaCha20-Poly1305 or CCM (CCM_8 included). */
export function isAead(cipherSuite: string): boolean {
  return /(_GCM_|CHACHA20_POLY1305|_CCM(_8)?(_SHA|$))/.test(cipherSuite.toUpperCase());
}

const OLD_PROTOCOLS = ['TLSv1', 'TLSv1.1'];

/** One line of the rule table: when it applies, the best grade it allows and the warning it adds (null: none). */
export interface GradeRule {
  id: string;
  check(input: GradeInput): { cap: Exclude<TlsGrade, 'F'>; warning: string | null } | null;
}

/**
 * The rule table, in the order warnings are listed (docs/tls-grading.md shows it with the SSL Labs rule each mirrors).
 * The grade is the lowest cap of the rules that apply; F whenever the certificate is not valid. Caps to A (no A+) add
 * no warning: A is not a downgrade.
 */
export const RULES: readonly GradeRule[] = [
  {
    id: 'expiry',
    check: ({ valid, daysUntilExpiry: d }) => {
      if (!valid || d === null) return null;
      if (d <= GRADE_RULES.criticalExpiryDays) return { cap: 'C', warning: d <= 0 ? 'certificate expires today' : `certificate expires in ${d} day${d === 1 ? '' : 's'}` };
      if (d <= GRADE_RULES.nearExpiryDays) return { cap: 'B', warning: `certificate expires in ${d} days` };
      if (d <= GRADE_RULES.aPlusMinDays) return { cap: 'A', warning: null };
      return null;
    },
  },
  {
    id: 'weak-cipher',
    check: ({ cipherSuite, protocol }) => {
      const weak = cipherSuite ? cipherWeaknesses(cipherSuite, protocol) : [];
      return weak.length > 0 ? { cap: 'C', warning: `weak cipher suite ${cipherSuite}: ${weak.join(', ')}` } : null;
    },
  },
  {
    id: 'rsa-key',
    check: ({ keyAlgorithm, keySize }) =>
      (keyAlgorithm === 'RSA' || keyAlgorithm === 'RSA-PSS') && keySize !== null && keySize < GRADE_RULES.minRsaBits
        ? { cap: 'C', warning: `RSA key of ${keySize} bits is under ${GRADE_RULES.minRsaBits} bits` }
        : null,
  },
  {
    id: 'signature',
    check: ({ signatureAlgorithm: s }) => (s && WEAK_SIGNATURE.test(s) ? { cap: 'C', warning: `certificate signature uses a broken hash (${s})` } : null),
  },
  {
    id: 'incomplete-chain',
    check: ({ valid, chainComplete }) =>
      valid && chainComplete === false
        ? { cap: 'B', warning: 'incomplete chain: the server does not send an intermediate certificate; clients that cannot fetch it fail' }
        : null,
  },
  {
    id: 'negotiated-protocol',
    check: ({ protocol }) => (protocol && protocolRank(protocol) < PROTOCOL_RANK['TLSv1.2'] ? { cap: 'B', warning: `protocol ${protocol} is older than TLSv1.2` } : null),
  },
  {
    id: 'accepted-protocols',
    check: ({ acceptedProtocols, protocol }) => {
      const old = (acceptedProtocols ?? []).filter((p) => OLD_PROTOCOLS.includes(p) && p !== protocol);
      return old.length > 0 ? { cap: 'B', warning: `the server also accepts ${old.join(' and ')}, older than TLSv1.2` } : null;
    },
  },
  {
    id: 'tls13-aead',
    check: ({ protocol, cipherSuite }) => (protocol === 'TLSv1.3' && cipherSuite !== null && isStrongAead(cipherSuite, protocol) ? null : { cap: 'A', warning: null }),
  },
  {
    id: 'hsts',
    check: ({ hstsMaxAge }) => (hstsMaxAge != null && hstsMaxAge >= GRADE_RULES.hstsMinMaxAge ? null : { cap: 'A', warning: null }),
  },
];

const ORDER: readonly TlsGrade[] = ['F', 'C', 'B', 'A', 'A+'];

/**
 * Grade by the rule table: F when not valid (its problems listed first, then any other weakness); otherwise the
 * lowest cap of the rules that apply, A+ when none does. Every rule that keeps a valid certificate below A warns.
 */
export function gradeTls(input: GradeInput): GradeResult {
  const warnings: string[] = [...input.validityProblems];
  let grade: TlsGrade = input.valid ? 'A+' : 'F';
  for (const rule of RULES) {
    const hit = rule.check(input);
    if (!hit) continue;
    if (hit.warning) warnings.push(hit.warning);
    if (ORDER.indexOf(hit.cap) < ORDER.indexOf(grade)) grade = hit.cap;
  }
  return { grade, warnings };
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
