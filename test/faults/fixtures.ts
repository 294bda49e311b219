// Well-behaved local upstreams for every operation (DNS zone, range API, TLS server with a test CA) and one valid request per operationId.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer, type TestDnsServer, type Zone } from '../support/dns-server.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createTestPki, DAY, startTlsServer, type RunningServer } from '../support/tls-fixtures.js';
import { startFaultyRange, type FaultyRange } from './fault-upstreams.js';
import { startSmtpFixture, type SmtpFixture } from '../support/smtp-fixture.js';

/** The domain DNS, email and TLS requests are about; it resolves to 127.0.0.1, where the TLS server listens. */
export const OK_DOMAIN = 'ok.test';

export const OK_ZONE: Zone = {
  [OK_DOMAIN]: [
    { type: 'SOA', ttl: 3600, data: { mname: `ns.${OK_DOMAIN}`, rname: `hostmaster.${OK_DOMAIN}`, minimum: 60 } },
    { type: 'A', data: '127.0.0.1', ttl: 3600 },
    { type: 'MX', data: { preference: 10, exchange: `mx.${OK_DOMAIN}` }, ttl: 3600 },
    { type: 'TXT', data: `v=spf1 ip4:127.0.0.1 include:_spf.${OK_DOMAIN} -all`, ttl: 3600 },
  ],
  [`mx.${OK_DOMAIN}`]: [{ type: 'A', data: '127.0.0.1', ttl: 3600 }],
  [`_spf.${OK_DOMAIN}`]: [{ type: 'TXT', data: 'v=spf1 ip4:127.0.0.0/8 ~all', ttl: 3600 }],
  [`_dmarc.${OK_DOMAIN}`]: [{ type: 'TXT', data: `v=DMARC1; p=reject; rua=mailto:dmarc@${OK_DOMAIN}`, ttl: 3600 }],
  [`google._domainkey.${OK_DOMAIN}`]: [{ type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC', ttl: 3600 }],
};

export interface Upstreams {
  dns: TestDnsServer;
  range: FaultyRange;
  tls: RunningServer;
  caFile: string;
  /** Service environment pointing every upstream here (TLS inspection allowed on 127.0.0.1). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface UpstreamOptions {
  zone?: Zone;
  /** Extra names the TLS certificate covers (the zone must point them at 127.0.0.1). */
  tlsNames?: string[];
  breached?: Record<string, number>;
}

/**
 * Upstreams and a harness on them with the outbound target guard on (ALLOW_PRIVATE_TARGETS left out: a non-public TLS
 * target is refused before any connection; names still resolve here only), short upstream timeouts, and quotas no
 * generated run reaches: for the files that send many generated requests.
 */
export async function startGuardedService(): Promise<{ up: Upstreams; h: Harness }> {
  const up = await startUpstreams();
  const { ALLOW_PRIVATE_TARGETS: _allowed, ...env } = up.env;
  const h = await startHarness({ ...env, DNS_TIMEOUT_MS: '500', TLS_TIMEOUT_MS: '500', QUOTA_PER_DAY: '100000000', QUOTA_PER_MONTH: '100000000' });
  return { up, h };
}

export async function startUpstreams(o: UpstreamOptions = {}): Promise<Upstreams> {
  const pki = createTestPki('Faults');
  const names = [OK_DOMAIN, ...(o.tlsNames ?? [])];
  const leaf = pki.leaf({ subject: [['CN', OK_DOMAIN]], dnsNames: names, notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 200 * DAY) });
  const dir = mkdtempSync(join(tmpdir(), 'vls-ca-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pki.root.certPem);
  const [dns, range, tls] = await Promise.all([
    startDnsServer({ ...OK_ZONE, ...o.zone }),
    startFaultyRange(o.breached),
    startTlsServer({ cert: leaf.chainPem, key: leaf.keyPem, hsts: 'max-age=31536000' }),
  ]);
  return {
    dns,
    range,
    tls,
    caFile,
    env: {
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      // Not the subject where these fixtures answer: deadlines for a starved machine, tests of timeouts set their own.
      DNS_TIMEOUT_MS: '10000',
      PWNED_PASSWORDS_URL: range.baseUrl,
      PWNED_TIMEOUT_MS: '10000',
      TLS_INSPECT_PORT: String(tls.port),
      TLS_EXTRA_CA_FILE: caFile,
      TLS_TIMEOUT_MS: '10000',
      ALLOW_PRIVATE_TARGETS: 'true',
    },
    async close() {
      await Promise.all([dns.close(), range.close(), tls.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface OperationRequest {
  operationId: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const json = { 'content-type': 'application/json' };

/** One valid request per operation of openapi.yaml, answered 200 against startUpstreams() (own IP: 404 from loopback). */
export function validRequests(o: { password?: string; cardNumber?: string; domain?: string } = {}): OperationRequest[] {
  const domain = o.domain ?? OK_DOMAIN;
  return [
    { operationId: 'validateIban', method: 'GET', path: '/api/v1/iban/DE89370400440532013000' },
    { operationId: 'validateBic', method: 'GET', path: '/api/v1/bic/DEUTDEFF' },
    { operationId: 'lookupDns', method: 'GET', path: `/api/v1/dns/${domain}?type=A,MX,TXT` },
    { operationId: 'inspectTlsCertificate', method: 'GET', path: `/api/v1/ssl/${domain}` },
    {
      operationId: 'checkPasswordStrength',
      method: 'POST',
      path: '/api/v1/password/strength',
      headers: json,
      body: JSON.stringify({ password: o.password ?? 'violet-Harbour-71' }),
    },
    {
      operationId: 'validateCard',
      method: 'POST',
      path: '/api/v1/creditcard/validate',
      headers: json,
      body: JSON.stringify({ cardNumber: o.cardNumber ?? '4571 0800 1234 5677' }),
    },
    { operationId: 'lookupIp', method: 'GET', path: '/api/v1/ip/81.2.69.142' },
    { operationId: 'lookupOwnIp', method: 'GET', path: '/api/v1/ip' },
    { operationId: 'validateEmail', method: 'GET', path: `/api/v1/email?address=info@${domain}` },
    { operationId: 'getUsage', method: 'GET', path: '/api/v1/usage' },
  ];
}

/**
 * A mail domain whose one MX host answers each RCPT late (`u<N>` exists, anything else is 550 5.1.1): a job over it
 * takes seconds, long enough to kill a worker or fail over Redis in the middle of it.
 */
export async function startSlowMailDomain(mx: string, rcptDelayMs: number): Promise<{ dns: TestDnsServer; smtp: SmtpFixture; items: (n: number) => string[] }> {
  const zone: Zone = { 'slow.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx.slow.test' } }], 'mx.slow.test': [{ type: 'A', data: mx }] };
  const dns = await startDnsServer(zone);
  const smtp = await startSmtpFixture({ [mx]: { rcpt: (local) => (/^u\d+$/.test(local) ? null : { code: 550, text: '5.1.1 unknown' }), rcptDelayMs } });
  return { dns, smtp, items: (n) => Array.from({ length: n }, (_, i) => `u${i}@slow.test`) };
}
