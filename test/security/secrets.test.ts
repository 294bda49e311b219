// Secrets: traffic for every operation at LOG_LEVEL=trace, then every log line, every file under DATA_DIR and every
// response is scanned for each password, card number and API key used (and their SHA-1 forms): zero hits.
// (Revoked/inactive keys refused at the next poll, and `keys create` printing only the key: test/unit/keys-cli.test.ts.)
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContractValidator } from '../../src/http/contract-validator.js';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { startUpstreams, validRequests, type OperationRequest, type Upstreams } from '../faults/fixtures.js';

const PASSWORDS = [
  'Tr0ub4dor&3-never-stored',
  'correct horse battery staple 42',
  'P@ssw0rd-breached-77',
  'ünïcødé-Paß-wört-9€',
  `Long-${'Zq9!'.repeat(60)}`,
];
const CARDS = ['4111 1111 1111 1111', '5555-5555-5555-4444', '378282246310005', '6011 0009 9013 9424', '4571-0800-1234-5678'];
const WRONG_KEY = 'vls_presented-but-unknown-key-0123456789';

const sha1 = (s: string) => createHash('sha1').update(s, 'utf8').digest('hex');
const digits = (c: string) => c.replace(/\D/g, '');
const grouped = (d: string, sep: string) => d.replace(/(\d{4})(?=\d)/g, `$1${sep}`);
/** Other separators a card number is written with; it must stay masked whatever separates its groups. */
const OTHER_SEPARATORS = ['.', '_', '/', '+', '\t', '  ', '. '];

/** Every form a secret could leak in: as given, digits only, regrouped, and its SHA-1 (hex both cases, and the 35-char suffix). */
function needles(): Map<string, string> {
  const out = new Map<string, string>();
  const add = (label: string, value: string) => out.set(value, label);
  const hashes = (label: string, value: string) => {
    const h = sha1(value);
    add(`${label} sha1`, h);
    add(`${label} SHA1`, h.toUpperCase());
    add(`${label} SHA1 suffix`, h.toUpperCase().slice(5));
    add(`${label} sha1 suffix`, h.slice(5));
  };
  for (const [i, pw] of PASSWORDS.entries()) {
    add(`password ${i}`, pw);
    hashes(`password ${i}`, pw);
  }
  for (const [i, card] of CARDS.entries()) {
    const d = digits(card);
    add(`card ${i}`, card);
    add(`card ${i} digits`, d);
    add(`card ${i} spaced`, grouped(d, ' '));
    add(`card ${i} dashed`, grouped(d, '-'));
    hashes(`card ${i}`, d);
    hashes(`card ${i} as given`, card);
    for (const sep of OTHER_SEPARATORS) {
      const written = grouped(d, sep);
      add(`card ${i} with ${JSON.stringify(sep)}`, written);
      add(`card ${i} with ${JSON.stringify(sep)} as JSON`, JSON.stringify(written).slice(1, -1));
      add(`card ${i} with ${JSON.stringify(sep)} percent-encoded`, encodeURIComponent(written));
    }
  }
  return out;
}

/** Where each needle occurs in `haystack` (utf8 and utf16le, binary-safe). */
function hits(haystack: Buffer, where: string, found: string[], secrets: Map<string, string>): void {
  for (const [value, label] of secrets) {
    if (haystack.includes(Buffer.from(value, 'utf8')) || haystack.includes(Buffer.from(value, 'utf16le'))) found.push(`${label} in ${where}`);
  }
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

const run = promisify(execFile);
const json = { 'content-type': 'application/json' };

let up: Upstreams;
let h: Harness;
let dataDir: string;
const responses: Array<{ where: string; text: string }> = [];
const operationsSeen = new Set<string>();

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vls-secrets-'));
  up = await startUpstreams({ breached: { [PASSWORDS[2]]: 4242 } });
  h = await startHarness({ ...up.env, DATA_DIR: dataDir, LOG_LEVEL: 'trace' });
});
afterAll(async () => {
  await h?.close();
  await up?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function send(r: OperationRequest, opts: { key?: string | null; label?: string } = {}): Promise<number> {
  const res = await h.call(r.path, { method: r.method, headers: r.headers, body: r.body, key: opts.key });
  operationsSeen.add(r.operationId);
  const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  responses.push({ where: `response to ${opts.label ?? r.operationId} ${r.method} ${r.path}`, text: `${headers}\n\n${res.text}` });
  return res.status;
}

const post = (operationId: string, path: string, body: string, headers: Record<string, string> = json): OperationRequest => ({ operationId, method: 'POST', path, headers, body });
const PW = '/api/v1/password/strength';
const CARD = '/api/v1/creditcard/validate';

describe('traffic with secrets', () => {
  // The first password estimate boots a zxcvbn worker thread: seconds of CPU on a loaded machine (a hang guard, not a timing).
  it('answers every operation, with each password and card number, and their error paths', async () => {
    for (const [i, password] of PASSWORDS.entries()) {
      for (const r of validRequests({ password, cardNumber: CARDS[i % CARDS.length] })) await send(r);
    }
    for (const card of CARDS) expect(await send(post('validateCard', CARD, JSON.stringify({ cardNumber: card })))).toBe(200);

    const pw = PASSWORDS[0];
    const card = CARDS[0];
    const errorPaths: Array<[OperationRequest, number]> = [
      [post('checkPasswordStrength', PW, `{"password": "${pw}"`), 400], // not JSON
      [post('checkPasswordStrength', PW, JSON.stringify({ password: [pw] })), 400],
      [post('checkPasswordStrength', PW, JSON.stringify({ passwd: pw })), 400],
      [post('checkPasswordStrength', PW, `{"password":"x","password":${JSON.stringify(pw)}}`), 200], // duplicate key: the last wins
      [post('checkPasswordStrength', PW, JSON.stringify({ password: pw, pad: 'p'.repeat(17 * 1024) })), 413],
      [post('checkPasswordStrength', PW, `password=${encodeURIComponent(pw)}`, { 'content-type': 'application/x-www-form-urlencoded' }), 400],
      [post('validateCard', CARD, JSON.stringify({ cardNumber: `${card} ${'9'.repeat(70)}` })), 400], // over 64 characters
      [post('validateCard', CARD, `{"cardNumber": ${digits(card)}}`), 400], // a number
      [post('validateCard', CARD, JSON.stringify({ card })), 400],
      [post('validateCard', CARD, JSON.stringify({ cardNumber: card, pad: 'p'.repeat(17 * 1024) })), 413],
      [post('validateCard', CARD, `{"cardNumber": "${card}`), 400],
      [{ operationId: 'validateBic', method: 'GET', path: `/api/v1/bic/DEUTDEFF?cardNumber=${digits(card)}&password=${encodeURIComponent(pw)}` }, 200],
    ];
    // A card number pasted into the BIC or IBAN field: a 200 with the number masked in every field. The last of CARDS
    // fails Luhn, so it is no card number there (the card endpoint still returns only its last four).
    for (const c of CARDS.slice(0, 4)) {
      errorPaths.push([{ operationId: 'validateBic', method: 'GET', path: `/api/v1/bic/${encodeURIComponent(c)}` }, 200]);
      errorPaths.push([{ operationId: 'validateIban', method: 'GET', path: `/api/v1/iban/${encodeURIComponent(c)}` }, 200]);
      errorPaths.push([{ operationId: 'validateIban', method: 'GET', path: `/api/v1/iban/BE${digits(c)}` }, 200]);
    }
    for (const [r, status] of errorPaths) expect(await send(r, { label: 'error path' }), `${r.path} ${r.body?.slice(0, 60)}`).toBe(status);
    // Other separators in paths that are echoed in errors or results, and a card number sent as an email address.
    const get = (operationId: string, path: string): OperationRequest => ({ operationId, method: 'GET', path });
    for (const c of CARDS.slice(0, 4)) {
      for (const sep of OTHER_SEPARATORS) {
        const written = encodeURIComponent(grouped(digits(c), sep));
        for (const r of [
          get('lookupDns', `/api/v1/dns/${written}`),
          get('inspectTlsCertificate', `/api/v1/ssl/${written}`),
          get('lookupIp', `/api/v1/ip/${written}`),
          get('validateIban', `/api/v1/iban/${written}`),
          get('validateBic', `/api/v1/bic/${written}`),
          get('validateEmail', `/api/v1/email?address=${written}`),
          get('validateEmail', `/api/v1/email?address=${written}%40mail.test`),
        ]) {
          expect(await send(r, { label: 'card with other separators' }), r.path).toBeLessThan(500);
        }
      }
      expect(await send(get('validateEmail', `/api/v1/email?address=${digits(c)}`), { label: 'card as an address' })).toBe(200);
    }
    // Card numbers as items of the bulk operations: masked in every result and per-item error, as in the single ones.
    const bulk: Array<[string, string]> = [['validateIbans', '/api/v1/iban/bulk'], ['validateBics', '/api/v1/bic/bulk'], ['validateEmails', '/api/v1/email/bulk']];
    for (const c of CARDS.slice(0, 4)) {
      const items = [c, digits(c), ...OTHER_SEPARATORS.map((sep) => grouped(digits(c), sep)), `${digits(c)}@mail.test`, `${c}!`];
      for (const [operationId, p] of bulk) {
        expect(await send(post(operationId, p, JSON.stringify({ items })), { label: 'card numbers as bulk items' }), p).toBe(200);
      }
    }
    // Card numbers in an email job's list (JSON and CSV): masked before the job is stored, so in no status, line or log.
    const jobs = '/api/v1/email/jobs';
    const listed = CARDS.slice(0, 4).flatMap((c) => [`${digits(c)}@mail.test`, c]);
    const created = await h.call(jobs, { method: 'POST', headers: json, body: JSON.stringify({ items: listed }) });
    operationsSeen.add('createEmailJob');
    responses.push({ where: 'response to createEmailJob with card numbers', text: created.text });
    expect(created.status).toBe(202);
    const csv = `email\n${listed.map((l) => `"${l}"`).join('\n')}\n`;
    expect(await send(post('createEmailJob', jobs, csv, { 'content-type': 'text/csv' }), { label: 'card numbers in a CSV list' })).toBe(202);
    const job = `${jobs}/${created.body.id}`;
    expect(await send({ operationId: 'getEmailJob', method: 'GET', path: job })).toBe(200);
    const lines = await h.fetch(`${job}/results`, { headers: { 'x-api-key': h.key } });
    operationsSeen.add('getEmailJobResults');
    responses.push({ where: 'results of the job with card numbers', text: await lines.text() });
    for (const accept of ['text/csv']) {
      const asCsv = await h.fetch(`${job}/results`, { headers: { 'x-api-key': h.key, accept } });
      responses.push({ where: 'CSV results of the job with card numbers', text: await asCsv.text() });
    }
    expect(await send({ operationId: 'cancelEmailJob', method: 'DELETE', path: job })).toBe(200);
    expect(await send(validRequests()[1], { key: WRONG_KEY, label: 'wrong key' })).toBe(403);
  });

  it('covered every operation of openapi.yaml', () => {
    // The API's operations: the System tag's routes (/healthz, /metrics...) take no input to leak.
    const system = new Set(Object.values<any>(h.composition.deps.spec.document.paths).flatMap((item) => Object.values<any>(item).filter((op) => op?.tags?.includes('System')).map((op) => op.operationId)));
    const all = createContractValidator(h.composition.deps.spec.document).operationIds().filter((id) => !system.has(id));
    expect([...operationsSeen].sort()).toEqual([...all].sort());
  });

  it('asked the range service only for /range/{5 hex} on PWNED_PASSWORDS_URL', () => {
    expect(up.range.requests.length).toBeGreaterThan(0);
    for (const line of up.range.requests) expect(line).toMatch(/^GET \/range\/[0-9A-F]{5}$/);
  });
});

describe('zero hits', () => {
  const secrets = needles();
  const apiKeys = () => new Map([[h.key, 'the API key'], [WRONG_KEY, 'a presented unknown key']]);

  it('in every response', () => {
    const found: string[] = [];
    for (const r of responses) hits(Buffer.from(r.text), r.where, found, secrets);
    expect(found).toEqual([]);
  });

  it('in every log line, which names keys only by id', async () => {
    h.composition.deps.logger.flush();
    await waitFor(() => h.logs.length > responses.length, { what: 'a log line per request' });
    const all = h.logs.join('\n');
    expect(h.logs.length).toBeGreaterThan(responses.length); // one line per request at least, plus trace output
    expect(all).toMatch(/"keyId":"key_/);
    const found: string[] = [];
    hits(Buffer.from(all), 'the logs', found, new Map([...secrets, ...apiKeys()]));
    expect(found).toEqual([]);
  });

  it('in every file under DATA_DIR (the SQLite database and its WAL), open and after close', async () => {
    const scan = () => {
      const found: string[] = [];
      const files = filesUnder(dataDir);
      for (const f of files) hits(readFileSync(f), f.slice(dataDir.length), found, new Map([...secrets, ...apiKeys()]));
      return { files, found };
    };
    const open = scan();
    expect(open.files.some((f) => f.endsWith('-wal'))).toBe(true);
    expect(open.found).toEqual([]);
    await h.close();
    expect(scan().found).toEqual([]);
  });

  it('in `npm run keys -- list`, which shows the id but never a key or its hash', async () => {
    const env = { ...process.env, DATA_DIR: dataDir };
    const { stdout } = await run('npm', ['run', '--silent', 'keys', '--', 'list', '--json'], { env });
    const listed = JSON.parse(stdout) as Array<{ id: string }>;
    expect(listed.length).toBeGreaterThan(0);
    expect(stdout).not.toContain(h.key);
    expect(stdout).not.toContain(createHash('sha256').update(h.key).digest('hex'));
    expect(stdout).not.toMatch(/vls_[A-Za-z0-9_-]{20,}/);
  });
});
