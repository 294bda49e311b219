// Test PKI and TLS servers: X.509 certificates built at run time (RFC 5280, @peculiar/asn1-x509 + node:crypto), node:tls servers on loopback.
import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type SecureVersion } from 'node:tls';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  GeneralSubtree,
  GeneralSubtrees,
  KeyIdentifier,
  KeyUsage,
  KeyUsageFlags,
  Name,
  NameConstraints,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_nameConstraints,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  id_kp_serverAuth,
  AccessDescription,
  AuthorityInfoAccessSyntax,
  id_ad_caIssuers,
  id_pe_authorityInfoAccess,
} from '@peculiar/asn1-x509';

export type KeyType = 'ec' | 'rsa2048' | 'rsa1024' | 'ed25519';
export type HashName = 'sha256' | 'sha384' | 'sha1';

export interface Issued {
  cert: X509Certificate;
  certPem: string;
  keyPem: string;
  key: KeyObject;
  subject: Name;
  keyType: KeyType;
  skid: Buffer;
}

export const DAY = 86_400_000;

const keyCache = new Map<KeyType, { publicKey: KeyObject; privateKey: KeyObject }>();

/** Key pairs are reused per type within a test process: generation (RSA especially) is slow. */
function keyPair(type: KeyType, fresh = false): { publicKey: KeyObject; privateKey: KeyObject } {
  const hit = keyCache.get(type);
  if (hit && !fresh) return hit;
  const kp =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : type === 'ed25519'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: type === 'rsa1024' ? 1024 : 2048 });
  if (!fresh) keyCache.set(type, kp);
  return kp;
}

function dn(attrs: Array<[string, string]>): Name {
  const oid: Record<string, string> = { C: '2.5.4.6', O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3' };
  return new Name(
    attrs.map(
      ([k, v]) =>
        new RelativeDistinguishedName([
          new AttributeTypeAndValue({ type: oid[k], value: new AttributeValue(k === 'C' ? { printableString: v } : { utf8String: v }) }),
        ]),
    ),
  );
}

const NULL_PARAMS = new Uint8Array([0x05, 0x00]).buffer;

function signatureAlgorithm(keyType: KeyType, hash: HashName): { id: AlgorithmIdentifier; digest: string | null } {
  if (keyType === 'ed25519') return { id: new AlgorithmIdentifier({ algorithm: '1.3.101.112' }), digest: null };
  if (keyType === 'ec') {
    const oid = { sha1: '1.2.840.10045.4.1', sha256: '1.2.840.10045.4.3.2', sha384: '1.2.840.10045.4.3.3' }[hash];
    return { id: new AlgorithmIdentifier({ algorithm: oid }), digest: hash };
  }
  const oid = { sha1: '1.2.840.113549.1.1.5', sha256: '1.2.840.113549.1.1.11', sha384: '1.2.840.113549.1.1.12' }[hash];
  return { id: new AlgorithmIdentifier({ algorithm: oid, parameters: NULL_PARAMS }), digest: hash };
}

function ext(id: string, critical: boolean, value: unknown): Extension {
  return new Extension({ extnID: id, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

function toPem(der: ArrayBuffer | Buffer): string {
  const b64 = Buffer.from(der as ArrayBuffer).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

export interface IssueOptions {
  subject: Array<[string, string]>;
  /** DNS names for subjectAltName (none: no SAN extension). */
  dnsNames?: string[];
  ipAddresses?: string[];
  notBefore?: Date;
  notAfter?: Date;
  keyType?: KeyType;
  /** Hash of the issuer's signature. */
  hash?: HashName;
  ca?: boolean;
  /** Sign with this issuer; omitted = self-signed. */
  issuer?: Issued;
  /** A key pair of its own instead of the shared one of its type. */
  freshKey?: boolean;
  /** Extended key usage OIDs of a leaf (default: serverAuth only; [] leaves the extension out). */
  extKeyUsage?: string[];
  /** A CA's basicConstraints pathLenConstraint. */
  pathLen?: number;
  /** A CA's name constraints: the only DNS subtrees it may issue for. */
  permittedDns?: string[];
  /** Key usage flags instead of the defaults (CA: keyCertSign and cRLSign; leaf: digitalSignature and keyEncipherment). */
  keyUsage?: number;
  /** Authority information access: where a client can fetch the issuer's certificate (RFC 5280 §4.2.2.1 caIssuers). */
  caIssuersUrl?: string;
  /** Embed an SCT list extension (RFC 6962 §3.3) holding one syntactically framed timestamp (its log signature is not real). */
  embeddedSct?: boolean;
}

/** A SignedCertificateTimestampList (RFC 6962 §3.3) with one v1 SCT: framing right, log id and signature random bytes. */
function sctList(): Buffer {
  const sct = Buffer.concat([Buffer.from([0]), randomBytes(32), Buffer.alloc(8), Buffer.from([0, 0]), Buffer.from([4, 3, 0, 32]), randomBytes(32)]);
  const item = Buffer.concat([Buffer.from([sct.length >> 8, sct.length & 0xff]), sct]);
  return Buffer.concat([Buffer.from([item.length >> 8, item.length & 0xff]), item]);
}

/** Build and sign one certificate. */
export function issue(o: IssueOptions): Issued {
  const keyType = o.keyType ?? 'ec';
  const kp = keyPair(keyType, o.freshKey);
  const spkiDer = kp.publicKey.export({ type: 'spki', format: 'der' });
  const spki = AsnConvert.parse(spkiDer, SubjectPublicKeyInfo);
  const skid = createHash('sha1').update(Buffer.from(spki.subjectPublicKey)).digest();
  const subject = dn(o.subject);
  const signer = o.issuer ?? { key: kp.privateKey, subject, keyType, skid };
  const alg = signatureAlgorithm(signer.keyType, o.hash ?? 'sha256');
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x10;
  const extensions = [
    ext(id_ce_basicConstraints, true, new BasicConstraints({ cA: o.ca ?? false, pathLenConstraint: o.pathLen })),
    ext(
      id_ce_keyUsage,
      true,
      new KeyUsage(
        o.keyUsage ?? (o.ca ? KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign : KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment),
      ),
    ),
    ext(id_ce_subjectKeyIdentifier, false, new SubjectKeyIdentifier(skid)),
    ext(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(signer.skid) })),
  ];
  const eku = o.extKeyUsage ?? [id_kp_serverAuth];
  if (!o.ca && eku.length > 0) extensions.push(ext(id_ce_extKeyUsage, false, new ExtendedKeyUsage(eku)));
  if (o.permittedDns) {
    const permitted = new GeneralSubtrees(o.permittedDns.map((d) => new GeneralSubtree({ base: new GeneralName({ dNSName: d }) })));
    extensions.push(ext(id_ce_nameConstraints, true, new NameConstraints({ permittedSubtrees: permitted })));
  }
  if (o.caIssuersUrl) {
    const aia = new AuthorityInfoAccessSyntax([new AccessDescription({ accessMethod: id_ad_caIssuers, accessLocation: new GeneralName({ uniformResourceIdentifier: o.caIssuersUrl }) })]);
    extensions.push(ext(id_pe_authorityInfoAccess, false, aia));
  }
  if (o.embeddedSct) extensions.push(ext('1.3.6.1.4.1.11129.2.4.2', false, new OctetString(sctList())));
  const sans = [...(o.dnsNames ?? []).map((d) => new GeneralName({ dNSName: d })), ...(o.ipAddresses ?? []).map((ip) => new GeneralName({ iPAddress: ip }))];
  if (sans.length > 0) extensions.push(ext(id_ce_subjectAltName, false, new SubjectAlternativeName(sans)));
  const now = Date.now();
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial.buffer.slice(serial.byteOffset, serial.byteOffset + serial.length),
    signature: alg.id,
    issuer: signer.subject,
    validity: new Validity({ notBefore: o.notBefore ?? new Date(now - DAY), notAfter: o.notAfter ?? new Date(now + 365 * DAY) }),
    subject,
    subjectPublicKeyInfo: spki,
    extensions: new Extensions(extensions),
  });
  const tbsDer = Buffer.from(AsnConvert.serialize(tbs));
  const signature = sign(alg.digest, tbsDer, signer.key);
  const certDer = AsnConvert.serialize(
    new Certificate({ tbsCertificate: tbs, signatureAlgorithm: alg.id, signatureValue: signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.length) }),
  );
  const certPem = toPem(certDer);
  return {
    cert: new X509Certificate(certPem),
    certPem,
    keyPem: kp.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    key: kp.privateKey,
    subject,
    keyType,
    skid,
  };
}

export interface TestPki {
  root: Issued;
  intermediate: Issued;
  /** A leaf issued by the intermediate; `chainPem` is leaf + intermediate, as a server sends it. */
  leaf(o: Omit<IssueOptions, 'issuer' | 'ca'>): Issued & { chainPem: string };
}

/** A test CA: root (self-signed) and intermediate, both EC P-256 unless told otherwise. */
export function createTestPki(name = 'Test'): TestPki {
  const root = issue({ subject: [['C', 'DE'], ['O', `${name} Trust`], ['CN', `${name} Root CA`]], ca: true, freshKey: true, notAfter: new Date(Date.now() + 3650 * DAY) });
  const intermediate = issue({
    subject: [['C', 'DE'], ['O', `${name} Trust`], ['CN', `${name} Intermediate CA`]],
    ca: true,
    issuer: root,
    freshKey: true,
    notAfter: new Date(Date.now() + 1825 * DAY),
  });
  return {
    root,
    intermediate,
    leaf: (o) => {
      const l = issue({ ...o, issuer: intermediate });
      return { ...l, chainPem: l.certPem + intermediate.certPem };
    },
  };
}

export interface RunningServer {
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

function track(server: Server, port: number): RunningServer {
  const sockets = new Set<Socket>();
  let count = 0;
  server.on('connection', (s: Socket) => {
    count++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    port,
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : 0);
    });
  });
}

export interface TlsServerOptions {
  /** PEM: leaf first, then intermediates. */
  cert: string;
  key: string;
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  /** OpenSSL cipher list for TLS <= 1.2; default 'DEFAULT:@SECLEVEL=0' (lets weak keys and SHA-1 load). */
  ciphers?: string;
  /** Answer HTTP requests with this Strict-Transport-Security value (none: the header is absent). */
  hsts?: string;
  /** Answer HTTP requests at all (default true); false: read and ignore them. */
  http?: boolean;
  /** Staple these bytes as the OCSP response when a client asks (status_request); none: nothing is stapled. */
  ocspResponse?: Buffer;
}

/**
 * A node:tls server on 127.0.0.1, port 0, that answers any HTTP request with 204 (+ optional HSTS). It accepts
 * TLS 1.2 and 1.3 unless told otherwise (a server still accepting 1.0/1.1 is graded B).
 */
export async function startTlsServer(o: TlsServerOptions): Promise<RunningServer> {
  const server = createTlsServer(
    { cert: o.cert, key: o.key, minVersion: o.minVersion ?? 'TLSv1.2', maxVersion: o.maxVersion ?? 'TLSv1.3', ciphers: o.ciphers ?? 'DEFAULT:@SECLEVEL=0' },
    (socket) => {
      socket.on('error', () => undefined);
      let buf = '';
      socket.on('data', (d: Buffer) => {
        if (o.http === false) return;
        buf += d.toString('latin1');
        if (!buf.includes('\r\n\r\n')) return;
        const hsts = o.hsts ? `Strict-Transport-Security: ${o.hsts}\r\n` : '';
        socket.end(`HTTP/1.1 204 No Content\r\n${hsts}Connection: close\r\n\r\n`);
      });
    },
  );
  server.on('tlsClientError', () => undefined);
  if (o.ocspResponse) {
    const response = o.ocspResponse;
    server.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, done: (err: Error | null, resp?: Buffer) => void) => done(null, response));
  }
  return track(server, await listen(server));
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers (a stalled handshake). */
export async function startSilentServer(): Promise<RunningServer> {
  const server = createTcpServer((s) => s.on('error', () => undefined));
  return track(server, await listen(server));
}

/** A port on 127.0.0.1 with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  const port = await listen(server);
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * A TLS server on 127.0.0.1 presenting a valid leaf (200 days left) for `names`, from a fresh test PKI whose root is
 * returned; with a year's HSTS unless told otherwise, so that it grades A+ (docs/tls-grading.md).
 */
export async function startValidTlsTarget(
  pkiName: string,
  names: string[],
  o: Omit<TlsServerOptions, 'cert' | 'key'> = {},
): Promise<{ server: RunningServer; pki: TestPki }> {
  const pki = createTestPki(pkiName);
  const leaf = pki.leaf({
    subject: [['CN', names[0]]],
    dnsNames: names,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 200 * DAY),
  });
  return { server: await startTlsServer({ hsts: 'max-age=31536000', ...o, cert: leaf.chainPem, key: leaf.keyPem }), pki };
}

/** An HTTPS server on 127.0.0.1 (node:https) with the given certificate chain and request handler. */
export async function startHttpsServer(o: { cert: string; key: string; handler: (req: IncomingMessage, res: ServerResponse) => void }): Promise<RunningServer> {
  const server = createHttpsServer({ cert: o.cert, key: o.key }, o.handler);
  server.on('tlsClientError', () => undefined);
  return track(server, await listen(server));
}
