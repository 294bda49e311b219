// X.509 certificate reading and path validation (RFC 5280 fields, RFC 4514 names) with node:crypto and @peculiar/asn1-x509.
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { AsnConvert } from '@peculiar/asn1-schema';
import { AuthorityInfoAccessSyntax, Certificate, Name, SubjectAlternativeName, id_ad_caIssuers, id_ce_subjectAltName, id_pe_authorityInfoAccess } from '@peculiar/asn1-x509';
import { signatureAlgorithmName } from '../../domain/tls-grade.js';

export interface CertificateFields {
  issuer: string;
  subject: string;
  serialNumber: string;
  validFrom: string;
  validTo: string;
  notBefore: Date;
  notAfter: Date;
  signatureAlgorithm: string;
  subjectAlternativeNames: string[];
  keyAlgorithm: string | null;
  keySize: number | null;
  /** The leaf embeds signed certificate timestamps (RFC 6962 §3.3 SCT list extension, OID 1.3.6.1.4.1.11129.2.4.2). */
  embeddedScts: boolean;
}

/** RFC 6962 §3.3: the X.509v3 extension carrying a SignedCertificateTimestampList. */
const SCT_LIST_OID = '1.3.6.1.4.1.11129.2.4.2';

const ATTRIBUTE_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.4': 'SN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.12': 'title',
  '2.5.4.15': 'businessCategory',
  '2.5.4.17': 'postalCode',
  '2.5.4.42': 'GN',
  '2.5.4.97': 'organizationIdentifier',
  '0.9.2342.19200300.100.1.1': 'UID',
  '0.9.2342.19200300.100.1.25': 'DC',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '1.3.6.1.4.1.311.60.2.1.1': 'jurisdictionL',
  '1.3.6.1.4.1.311.60.2.1.2': 'jurisdictionST',
  '1.3.6.1.4.1.311.60.2.1.3': 'jurisdictionC',
};

/** RFC 4514 escaping of an attribute value. */
function escapeDnValue(v: string): string {
  let out = v.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/\0/g, '\\00');
  if (out.startsWith('#') || out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && out.length > 1) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** Distinguished name as RFC 4514 text, most specific first: "CN=example.com, O=Example, C=US". */
function formatName(name: Name): string {
  return [...name]
    .reverse()
    .map((rdn) =>
      [...rdn]
        .map((atv) => {
          const key = ATTRIBUTE_NAMES[atv.type] ?? atv.type;
          const value = atv.value.anyValue && !atv.value.ia5String ? `#${atv.value.toString()}` : escapeDnValue(atv.value.toString());
          return `${key}=${value}`;
        })
        .join('+'),
    )
    .join(', ');
}

const EC_CURVE_BITS: Record<string, number> = {
  prime256v1: 256,
  'P-256': 256,
  secp256k1: 256,
  secp384r1: 384,
  'P-384': 384,
  secp521r1: 521,
  'P-521': 521,
  secp224r1: 224,
  prime192v1: 192,
};

/** Public key algorithm and size: RSA/RSA-PSS/DSA modulus bits, EC curve bits, Ed25519 256, Ed448 456. */
function describeKey(cert: X509Certificate): { keyAlgorithm: string | null; keySize: number | null } {
  const key = cert.publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { keyAlgorithm: 'RSA', keySize: details.modulusLength ?? null };
    case 'rsa-pss':
      return { keyAlgorithm: 'RSA-PSS', keySize: details.modulusLength ?? null };
    case 'dsa':
      return { keyAlgorithm: 'DSA', keySize: details.modulusLength ?? null };
    case 'ec':
      return { keyAlgorithm: 'EC', keySize: details.namedCurve ? EC_CURVE_BITS[details.namedCurve] ?? null : null };
    case 'ed25519':
      return { keyAlgorithm: 'Ed25519', keySize: 256 };
    case 'ed448':
      return { keyAlgorithm: 'Ed448', keySize: 456 };
    default:
      return { keyAlgorithm: key.asymmetricKeyType ?? null, keySize: null };
  }
}

/** The http(s) caIssuers URLs of a certificate's authority information access (RFC 5280 §4.2.2.1); [] when none or unreadable. */
export function caIssuersUrls(cert: X509Certificate): string[] {
  try {
    const ext = AsnConvert.parse(cert.raw, Certificate).tbsCertificate.extensions?.find((e) => e.extnID === id_pe_authorityInfoAccess);
    if (!ext) return [];
    return [...AsnConvert.parse(ext.extnValue, AuthorityInfoAccessSyntax)]
      .filter((d) => d.accessMethod === id_ad_caIssuers)
      .map((d) => d.accessLocation.uniformResourceIdentifier ?? '')
      .filter((u) => /^https?:\/\//i.test(u));
  } catch {
    return [];
  }
}

/** Read the reported fields of a DER certificate. Throws when the DER is not a certificate. */
export function readCertificate(cert: X509Certificate): CertificateFields {
  const asn = AsnConvert.parse(cert.raw, Certificate);
  const tbs = asn.tbsCertificate;
  const notBefore = tbs.validity.notBefore.getTime();
  const notAfter = tbs.validity.notAfter.getTime();
  const sanExt = tbs.extensions?.find((e) => e.extnID === id_ce_subjectAltName);
  const san = sanExt ? AsnConvert.parse(sanExt.extnValue, SubjectAlternativeName) : [];
  return {
    issuer: formatName(tbs.issuer),
    subject: formatName(tbs.subject),
    serialNumber: cert.serialNumber.toUpperCase(),
    validFrom: notBefore.toISOString(),
    validTo: notAfter.toISOString(),
    notBefore,
    notAfter,
    signatureAlgorithm: signatureAlgorithmName(asn.signatureAlgorithm.algorithm),
    subjectAlternativeNames: [...san].flatMap((g) => (g.dNSName ? [g.dNSName] : [])),
    ...describeKey(cert),
    embeddedScts: tbs.extensions?.some((e) => e.extnID === SCT_LIST_OID) ?? false,
  };
}

export interface TrustStore {
  /** Number of trust anchors. */
  size: number;
  /** The anchors as PEM, for the TLS client context (the same anchors OpenSSL then validates against). */
  pems: string[];
  isAnchor(cert: X509Certificate): boolean;
  findIssuer(cert: X509Certificate): X509Certificate | undefined;
}

/** Split a PEM bundle into certificates; blocks that do not parse are skipped. */
function parsePemBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const out: X509Certificate[] = [];
  for (const b of blocks) {
    try {
      out.push(new X509Certificate(b));
    } catch {
      /* not a certificate: ignored */
    }
  }
  return out;
}

function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

let nodeRoots: X509Certificate[] | undefined;

/**
 * Trust anchors: Node's bundled root store plus the certificates of an extra PEM bundle. Parsing the
 * ~140 bundled roots takes ~100 ms (synchronous, once per process): create the store at start-up.
 */
export function createTrustStore(extraCaPem?: string): TrustStore {
  nodeRoots ??= rootCertificates.flatMap((p) => parsePemBundle(p));
  const anchors = [...nodeRoots, ...parsePemBundle(extraCaPem ?? '')];
  const bySubject = new Map<string, X509Certificate[]>();
  const fingerprints = new Set<string>();
  for (const a of anchors) {
    fingerprints.add(a.fingerprint256);
    bySubject.set(a.subject, [...(bySubject.get(a.subject) ?? []), a]);
  }
  return {
    size: anchors.length,
    pems: anchors.map((a) => a.toString()),
    isAnchor: (cert) => fingerprints.has(cert.fingerprint256),
    findIssuer: (cert) => (bySubject.get(cert.issuer) ?? []).find((a) => issuedBy(cert, a)),
  };
}

export interface ChainVerdict {
  trusted: boolean;
  /** Leaf first; ends with the trust anchor when trusted. */
  chain: X509Certificate[];
  selfSigned: boolean;
  /** Why the chain is not trusted; null when trusted. */
  problem: string | null;
}

const MAX_DEPTH = 10;

/** Issuer name equals subject name and the certificate's own key verifies its signature (key usage not required). */
function isSelfSigned(cert: X509Certificate): boolean {
  try {
    return cert.issuer === cert.subject && cert.verify(cert.publicKey);
  } catch {
    return false;
  }
}

function commonName(cert: X509Certificate): string {
  return /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? cert.subject.replace(/\n/g, ', ');
}

/**
 * Build a path from the leaf through the presented certificates to a trust anchor and check it:
 * every signature, CA flag of each issuer and the validity dates of the issuers (the leaf's own dates
 * are judged by the caller).
 */
export function verifyChain(presented: X509Certificate[], store: TrustStore, now: Date): ChainVerdict {
  const leaf = presented[0];
  const pool = presented.slice(1);
  const chain = [leaf];
  const fail = (problem: string, selfSigned = false): ChainVerdict => ({ trusted: false, chain, selfSigned, problem });
  let cur = leaf;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (store.isAnchor(cur)) break;
    const anchor = store.findIssuer(cur);
    if (anchor) {
      chain.push(anchor);
      break;
    }
    if (isSelfSigned(cur)) {
      return chain.length === 1
        ? fail('certificate is self-signed', true)
        : fail(`the chain ends in an untrusted root (${commonName(cur)})`);
    }
    const next = pool.find((c) => !chain.includes(c) && issuedBy(cur, c));
    if (!next) return fail(`the issuer of ${commonName(cur)} is unknown (incomplete or untrusted chain)`);
    chain.push(next);
    cur = next;
    if (depth === MAX_DEPTH - 1) return fail('the chain is too long');
  }
  for (const ca of chain.slice(1)) {
    if (!ca.ca) return fail(`${commonName(ca)} is not a CA certificate`);
    const from = new Date(ca.validFrom);
    const to = new Date(ca.validTo);
    if (now < from || now > to) return fail(`issuer certificate ${commonName(ca)} is outside its validity period`);
  }
  return { trusted: true, chain, selfSigned: false, problem: null };
}

/**
 * OpenSSL's verify results (Node's `authorizationError` codes) that verifyChain or the caller already judge,
 * with messages of their own: dates (judged at the inspection's clock), trust anchoring, signatures and the host
 * name (Node's own identity check reports ERR_TLS_CERT_ALTNAME_INVALID in the same place).
 */
const JUDGED_HERE = new Set([
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Fixed phrases for the rest (nothing of OpenSSL's text is passed on). */
const PATH_PROBLEMS: Record<string, string> = {
  INVALID_PURPOSE: 'the certificate is not issued for TLS server authentication (extended key usage)',
  PATH_LENGTH_EXCEEDED: "the chain is longer than an issuer's path length constraint allows",
  INVALID_CA: 'an issuer in the chain may not issue certificates',
  CERT_REJECTED: 'a certificate in the chain is rejected for TLS server authentication',
  CERT_CHAIN_TOO_LONG: 'the chain is too long',
};

/**
 * What RFC 5280 path validation beyond verifyChain's checks found, from OpenSSL's verdict on the same chain and
 * anchors: key purpose, path length and name constraints, issuer key usage, critical extensions. Null when none.
 */
export function pathValidationProblem(authorizationError: string | null | undefined): string | null {
  if (!authorizationError || JUDGED_HERE.has(authorizationError)) return null;
  return PATH_PROBLEMS[authorizationError] ?? 'the chain fails path validation (RFC 5280: an issuer\'s key usage, name constraints or a critical extension)';
}

/** Whether the leaf covers the host name (SAN DNS names, CN only without them) or the IP address. */
export function matchesHost(leaf: X509Certificate, target: { kind: 'hostname' | 'ip'; value: string }): boolean {
  try {
    return target.kind === 'ip' ? leaf.checkIP(target.value) !== undefined : leaf.checkHost(target.value) !== undefined;
  } catch {
    return false;
  }
}
