// The TypeScript client against a real server: every operation's typed result and the error model surfacing as ApiError.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../test/support/dns-server.js';
import { startHarness, type Harness } from '../../../test/support/harness.js';
import { startSmtpFixture, type SmtpFixture } from '../../../test/support/smtp-fixture.js';
import { startValidTlsTarget, type RunningServer } from '../../../test/support/tls-fixtures.js';
import { parseYaml } from '../../../test/support/yaml.js';
import { ApiError, ValidationClient, toApiError } from '../src/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BREACHED = 'P@ssw0rd';
const BREACH_COUNT = 4242;

let dns: TestDnsServer;
let tls: RunningServer;
let h: Harness;
let proxied: Harness;
let smtp: SmtpFixture;
let client: ValidationClient;

/** A fresh key on the main server with its own limits. */
async function limitedKey(limits: { perMinute?: number; perDay?: number; perMonth?: number }): Promise<{ key: string }> {
  const { key } = await h.composition.keyStore.create({ name: 'client-limits', ...limits });
  await h.composition.keys.refresh();
  return { key };
}

/** The rejection of a call, asserted to be an ApiError. */
async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

beforeAll(async () => {
  const { server, pki } = await startValidTlsTarget('Client', ['secure.test']);
  tls = server;
  dns = await startDnsServer({
    'mail.test': [
      { type: 'SOA', data: { mname: 'ns1.mail.test', rname: 'hostmaster.mail.test', serial: 1, minimum: 60 } },
      { type: 'A', data: '192.0.2.10', ttl: 120 },
      { type: 'MX', data: { preference: 10, exchange: 'mx1.mail.test' }, ttl: 3600 },
      { type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all', ttl: 300 },
    ],
    '_dmarc.mail.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:dmarc@mail.test' }],
    'secure.test': [{ type: 'A', data: '127.0.0.1' }],
    'smtp.test': [{ type: 'MX', data: { preference: 10, exchange: 'mx.smtp.test' } }],
    'mx.smtp.test': [{ type: 'A', data: '127.0.0.30' }],
  });
  smtp = await startSmtpFixture({ '127.0.0.30': { users: ['jane'] } });
  const dir = mkdtempSync(join(tmpdir(), 'vls-client-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pki.root.certPem);
  // An offline range mirror holding the breached password's SHA-1 suffix: nothing leaves the machine.
  const sha1 = createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
  writeFileSync(join(dir, `${sha1.slice(0, 5)}.txt`), `${sha1.slice(5)}:${BREACH_COUNT}\n`);
  h = await startHarness({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '1000',
    TLS_INSPECT_PORT: String(tls.port),
    TLS_EXTRA_CA_FILE: caFile,
    TLS_TIMEOUT_MS: '2000',
    ALLOW_PRIVATE_TARGETS: 'true',
    PWNED_PASSWORDS_DIR: dir,
    RATE_LIMIT_PER_MINUTE: '1000',
    SMTP_CHECK: 'on',
    SMTP_HELO_NAME: 'verifier.example.net',
    SMTP_MAIL_FROM: 'check@verifier.example.net',
    SMTP_PORT: String(smtp.port),
  }, { tcp: true }); // TCP: the subject is the SDK, an HTTP client over fetch
  proxied = await startHarness({ TRUST_PROXY: 'true' }, { tcp: true });
  client = new ValidationClient({ baseUrl: h.url, apiKey: h.key });
});

afterAll(async () => {
  await Promise.all([h?.close(), proxied?.close()]);
  await tls?.close();
  await smtp?.close();
  await dns?.close();
});

describe('ValidationClient: one typed method per operation', () => {
  it('validateIban returns the verdict with the resolved BIC', async () => {
    const r = await client.validateIban('DE89370400440532013000');
    expect(r).toMatchObject({ iban: 'DE89370400440532013000', valid: true, countryCode: 'DE', bankCode: '37040044', bic: 'COBADEFFXXX', bicValid: true });
    // Typed fields of the contract: the bank's name and the SEPA reach.
    const name: string | null = r.bankName;
    const sepa: boolean = r.sepa;
    expect({ name, sepa }).toEqual({ name: 'Commerzbank', sepa: true });
  });

  it('validateIban encodes a printed IBAN with spaces into the path', async () => {
    const r = await client.validateIban('DE89 3704 0044 0532 0130 00');
    expect(r.iban).toBe('DE89370400440532013000');
    expect(r.valid).toBe(true);
  });

  it('validateBic returns the expanded BIC and its parts', async () => {
    const r = await client.validateBic('DEUTDEFF');
    expect(r).toEqual({ bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX', inDirectory: true, bankName: 'Deutsche Bank', sharedBy: 1 });
  });

  it('lookupDns asks the given types and returns the mail-security analysis', async () => {
    const r = await client.lookupDns('mail.test', { types: ['MX', 'TXT'] });
    expect(r.records.map((rec) => rec.type).sort()).toEqual(['MX', 'TXT']);
    expect(r.records.find((rec) => rec.type === 'MX')).toMatchObject({ value: 'mx1.mail.test', priority: 10, ttl: 3600 });
    expect(r.security.spf).toMatchObject({ present: true, qualifier: '-all' });
    expect(r.security.dmarc).toMatchObject({ present: true, policy: 'reject', reportingEmail: 'dmarc@mail.test' });
  });

  it('lookupDns asks A by default', async () => {
    const r = await client.lookupDns('mail.test');
    expect(r.records).toEqual([{ type: 'A', name: 'mail.test', value: '192.0.2.10', ttl: 120, priority: null }]);
  });

  it('inspectTlsCertificate grades a valid certificate', async () => {
    const r = await client.inspectTlsCertificate('secure.test');
    expect(r).toMatchObject({ domain: 'secure.test', valid: true, grade: 'A+', subject: 'CN=secure.test', errorMessage: null });
    expect(r.daysUntilExpiry).toBeGreaterThanOrEqual(199);
  });

  // The first password estimate boots a zxcvbn worker thread: seconds of CPU on a loaded machine (a hang guard, not a timing).
  it('checkPasswordStrength reports a breached password with its count', { timeout: 60_000 }, async () => {
    const r = await client.checkPasswordStrength(BREACHED);
    expect(r).toMatchObject({ breached: true, breachCount: BREACH_COUNT });
    expect(r.score).toBeLessThanOrEqual(1);
  });

  it('validateCard returns the verdict and only the last four digits', async () => {
    const r = await client.validateCard('4571 0800 1234 5677');
    expect(r).toMatchObject({ valid: true, luhnValid: true, cardBrand: 'Visa', lastFourDigits: '5677', cardCategory: null });
    expect(JSON.stringify(r)).not.toContain('45710800');
  });

  it('lookupIp geolocates a public address', async () => {
    const r = await client.lookupIp('81.2.69.142');
    expect(r).toMatchObject({ ip: '81.2.69.142', ipType: 'IPV4', countryCode: 'GB', cityName: 'London' });
    expect(r.security).toEqual({ isHosting: false, hostingProvider: null, isTor: false });
  });

  it('lookupIp flags an address in a cloud provider range', async () => {
    const r = await client.lookupIp('3.5.140.1');
    const provider: string | null = r.security.hostingProvider;
    expect({ provider, isHosting: r.security.isHosting }).toEqual({ provider: 'Amazon Web Services', isHosting: true });
  });

  it('lookupOwnIp geolocates the caller (behind a trusted proxy, extra headers passed through)', async () => {
    const behindProxy = new ValidationClient({ baseUrl: proxied.url, apiKey: proxied.key, headers: { 'X-Forwarded-For': '81.2.69.142' } });
    const r = await behindProxy.lookupOwnIp();
    expect(r).toMatchObject({ ip: '81.2.69.142', countryCode: 'GB' });
  });

  it('validateEmail checks format and the domain records', async () => {
    const r = await client.validateEmail('info@mail.test');
    expect(r).toMatchObject({ email: 'info@mail.test', user: 'info', domain: 'mail.test', validFormat: true, mxRecord: true, roleAddress: true });
  });

  it('validateEmail and validateEmails take { smtp: true } and answer deliverability', async () => {
    expect((await client.validateEmail('info@mail.test')).deliverability).toMatchObject({ status: 'not_checked', reason: 'not_requested' });
    const r = await client.validateEmail('jane@smtp.test', { smtp: true });
    expect(r.deliverability).toEqual({ status: 'deliverable', reason: 'accepted', catchAll: false, mxHost: 'mx.smtp.test', smtpCode: 250, enhancedCode: null, tls: false });
    const items = await client.validateEmails(['john@smtp.test', 'jane@smtp.test'], { smtp: true });
    expect(items.map((i) => (i.status === 200 ? i.result.deliverability.reason : i.status))).toEqual(['mailbox_not_found', 'accepted']);
  });

  it('validateIbans, validateBics and validateEmails answer each item in order, errors per item', async () => {
    const ibans = await client.validateIbans(['DE89 3704 0044 0532 0130 00', 'DE89/3704']);
    expect(ibans).toHaveLength(2);
    expect(ibans[0]).toMatchObject({ status: 200, result: { valid: true, bic: 'COBADEFFXXX' } });
    expect(ibans[1]).toMatchObject({ status: 400, error: { code: 'INVALID_FORMAT', details: [{ field: 'iban' }] } });
    const bics = await client.validateBics(['!!', 'DEUTDEFF']);
    expect(bics.map((b) => b.status)).toEqual([400, 200]);
    const second = bics[1];
    if (second.status !== 200) throw new Error('expected a result');
    expect(second.result.bic).toBe('DEUTDEFFXXX');
    const emails = await client.validateEmails(['info@mail.test', '']);
    expect(emails[0]).toMatchObject({ status: 200, result: { mxRecord: true, roleAddress: true } });
    expect(emails[1]).toMatchObject({ status: 400, error: { code: 'INVALID_FORMAT' } });
  });

  it('a bulk call that does not fit the key\'s limits rejects whole with the 429 saying how many items fit', async () => {
    const { key } = await limitedKey({ perMinute: 3 });
    const c = new ValidationClient({ baseUrl: h.url, apiKey: key });
    const err = await rejection(c.validateBics(['DEUTDEFF', 'DEUTDEFF', 'DEUTDEFF', 'DEUTDEFF']));
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', details: [{ field: 'items' }] });
    expect(err.message).toContain('3 of the 4 items would fit now');
    expect(await c.validateBics(['DEUTDEFF', 'DEUTDEFF', 'DEUTDEFF'])).toHaveLength(3);
  });

  it('createEmailJob (a list or a CSV), getEmailJob, getEmailJobResults (NDJSON lines as they stream) and cancelEmailJob', async () => {
    const job = await client.createEmailJob(['jane@smtp.test', 'nobody@smtp.test', 'jane@smtp.test'], { smtp: true, webhookUrl: 'http://127.0.0.1:9/h' });
    expect(job).toMatchObject({ status: 'queued', total: 3, distinct: 2 });
    expect(job.webhookSecret).toMatch(/^whsec_/);
    const deadline = Date.now() + 30_000;
    let now = await client.getEmailJob(job.id);
    while (now.finishedAt === null && Date.now() < deadline) now = await client.getEmailJob(job.id);
    expect(now).toMatchObject({ status: 'completed', processed: 3, counts: { deliverable: 2, undeliverable: 1 } });
    const lines = [];
    for await (const line of client.getEmailJobResults(job.id)) lines.push([line.index, line.status]);
    expect(lines).toEqual([[0, 'deliverable'], [1, 'undeliverable'], [2, 'deliverable']]);
    const only = [];
    for await (const line of client.getEmailJobResults(job.id, { status: 'undeliverable' })) only.push(line.email);
    expect(only).toEqual(['nobody@smtp.test']);
    const fromCsv = await client.createEmailJob({ csv: 'Name,Email\nJane,jane@smtp.test\n' });
    expect(fromCsv).toMatchObject({ total: 1, smtp: false });
    expect(await client.cancelEmailJob(fromCsv.id)).toMatchObject({ id: fromCsv.id });
    const missing = await rejection(client.getEmailJob('job_00000000000000000000000000000000'));
    expect(missing.code).toBe('RESOURCE_NOT_FOUND');
    const gone = client.getEmailJobResults('job_00000000000000000000000000000000');
    expect((await rejection(gone.next())).status).toBe(404);
  });

  it('getUsage returns the key\'s windows without counting itself', async () => {
    const { key } = await limitedKey({ perMinute: 5 });
    const c = new ValidationClient({ baseUrl: h.url, apiKey: key });
    await c.validateBic('DEUTDEFF');
    const first = await c.getUsage();
    const second = await c.getUsage();
    expect(first.minute).toMatchObject({ limit: 5, used: 1, remaining: 4 });
    expect(second.minute.used).toBe(1);
    expect(first.day.limit).toBeGreaterThan(0);
    expect(Date.parse(first.month.resetAt)).toBeGreaterThan(Date.now());
  });

  it('accepts a base URL with a trailing slash and a custom fetch', async () => {
    const seen: string[] = [];
    const c = new ValidationClient({
      baseUrl: `${h.url}/`,
      apiKey: h.key,
      fetch: (req) => {
        seen.push(new URL(req.url).pathname);
        return fetch(req);
      },
    });
    await c.validateBic('DEUTDEFF');
    expect(seen).toEqual(['/api/v1/bic/DEUTDEFF']);
  });
});

describe('ValidationClient: errors surface as ApiError', () => {
  it('401 UNAUTHORIZED when the key does not reach the server, with a null requestId', async () => {
    // A proxy that strips the header: the service answers 401 with no correlation id.
    const stripping = new ValidationClient({
      baseUrl: h.url,
      apiKey: h.key,
      fetch: (req) => {
        const headers = new Headers(req.headers);
        headers.delete('X-Api-Key');
        return fetch(new Request(req, { headers }));
      },
    });
    const err = await rejection(stripping.validateBic('DEUTDEFF'));
    expect(err).toMatchObject({ status: 401, code: 'UNAUTHORIZED', requestId: null, path: '/api/v1/bic/DEUTDEFF', details: [] });
    expect(err.message).toMatch(/X-Api-Key/);
  });

  it('403 FORBIDDEN for an unknown key, with the request id', async () => {
    const wrong = new ValidationClient({ baseUrl: h.url, apiKey: 'vls_not-a-real-key' });
    const err = await rejection(wrong.validateIban('DE89370400440532013000'));
    expect(err).toMatchObject({ status: 403, code: 'FORBIDDEN', retryAfter: null });
    expect(err.requestId).toMatch(UUID);
  });

  it('400 INVALID_FORMAT with field-level details', async () => {
    const err = await rejection(client.validateBic('DE$UT'));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT', details: [{ field: 'bic', message: expect.any(String) }] });
    expect(err.path).toMatch(/^\/api\/v1\/bic\//);
    expect(err.requestId).toMatch(UUID);
  });

  it('400 MISSING_PARAMETER naming the parameter', async () => {
    const err = await rejection(client.raw.GET('/api/v1/email', { params: { query: {} as { address: string } } }).then(({ response, error }) => Promise.reject(toApiError(response, error))));
    expect(err).toMatchObject({ status: 400, code: 'MISSING_PARAMETER', path: '/api/v1/email', message: 'parameter address is required' });
  });

  it('400 INVALID_FORMAT for an empty value, which is given, not absent', async () => {
    const err = await rejection(client.validateEmail(''));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_FORMAT', path: '/api/v1/email', details: [{ field: 'address' }] });
  });

  it('404 RESOURCE_NOT_FOUND for a private address', async () => {
    const err = await rejection(client.lookupIp('10.0.0.1'));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND' });
  });

  it('404 RESOURCE_NOT_FOUND for a domain that does not exist', async () => {
    const err = await rejection(client.lookupDns('nope.test'));
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', path: '/api/v1/dns/nope.test' });
  });

  it('404 for the own address when the caller is on loopback', async () => {
    const err = await rejection(client.lookupOwnIp());
    expect(err).toMatchObject({ status: 404, code: 'RESOURCE_NOT_FOUND', path: '/api/v1/ip' });
  });

  it.each([
    ['perMinute', 'RATE_LIMIT_EXCEEDED'],
    ['perDay', 'DAILY_QUOTA_EXCEEDED'],
    ['perMonth', 'QUOTA_EXCEEDED'],
  ] as const)('429 with retryAfter when the %s limit is spent: %s', async (limit, code) => {
    const { key } = await limitedKey({ [limit]: 1 });
    const c = new ValidationClient({ baseUrl: h.url, apiKey: key });
    await c.validateBic('DEUTDEFF');
    const err = await rejection(c.validateBic('DEUTDEFF'));
    expect(err).toMatchObject({ status: 429, code, path: '/api/v1/bic/DEUTDEFF' });
    expect(err.retryAfter).toBeGreaterThan(0);
    expect(err.requestId).toMatch(UUID);
  });

  it('keeps the raw ErrorInfo body', async () => {
    const err = await rejection(client.validateBic('DE$UT'));
    expect(err.body).toMatchObject({ status: 400, code: 'INVALID_FORMAT', error: err.message });
  });
});

describe('toApiError', () => {
  it('reads Retry-After and X-Request-Id from the headers when the body is not ErrorInfo', () => {
    const res = new Response('<html>bad gateway</html>', { status: 502, headers: { 'Retry-After': '7', 'X-Request-Id': 'abc' } });
    const err = toApiError(res, '<html>bad gateway</html>');
    expect(err).toMatchObject({ status: 502, code: 'UNEXPECTED_RESPONSE', retryAfter: 7, requestId: 'abc', path: null });
  });

  it('prefers the body retryAfter over the header', () => {
    const body = { requestId: 'r1', path: '/api/v1/bic/X', status: 429, code: 'RATE_LIMIT_EXCEEDED', message: 'try again later', error: 'try again later', details: [], retryAfter: 12 };
    const err = toApiError(new Response(null, { status: 429, headers: { 'Retry-After': '30' } }), body);
    expect(err).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', retryAfter: 12, requestId: 'r1' });
  });
});

describe('ValidationClient construction', () => {
  it.each([
    ['baseUrl', { baseUrl: '', apiKey: 'k' }],
    ['apiKey', { baseUrl: 'http://127.0.0.1:1', apiKey: '' }],
  ])('refuses an empty %s', (name, opts) => {
    expect(() => new ValidationClient(opts)).toThrow(name);
  });
});

describe('the SDK samples of openapi.yaml (x-codeSamples, shown on /docs)', () => {
  it('every operation has one, and each typechecks against this client', { timeout: 60_000 }, async () => {
    const ts = (await import('typescript')).default;
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const spec = parseYaml(readFileSync(join(root, 'openapi.yaml'), 'utf8'));
    const samples = new Map<string, string>();
    for (const item of Object.values(spec.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        // The System tag's routes (/healthz, /metrics...) are no API operations: the client has no method for them.
        if (!op?.operationId || op.tags?.includes('System')) continue;
        const sdk = (op['x-codeSamples'] ?? []).find((s: { label: string }) => s.label === 'TypeScript SDK');
        expect(sdk?.source, `${op.operationId} has a TypeScript SDK sample`).toContain(`client.${op.operationId}(`);
        samples.set(join(root, `clients/typescript/test/__samples__/${op.operationId}.mts`), sdk.source);
      }
    }
    expect([...samples.keys()].map((f) => f.replace(/.*\//, '').replace('.mts', ''))).toEqual(
      expect.arrayContaining(Object.getOwnPropertyNames(ValidationClient.prototype).filter((m) => m !== 'constructor')),
    );
    const options = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      baseUrl: root,
      paths: { '@vls/client': ['clients/typescript/src/index.ts'] },
      allowImportingTsExtensions: true,
    };
    const host = ts.createCompilerHost(options);
    const { fileExists, readFile } = host;
    host.fileExists = (f) => samples.has(f) || fileExists.call(host, f);
    host.readFile = (f) => samples.get(f) ?? readFile.call(host, f);
    const program = ts.createProgram([...samples.keys()], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName.replace(root, '') ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  });
});
