// The requests the bench sends per endpoint (openapi.yaml paths), and a sanity check of each 200 body.
import { BENCH_DOMAIN } from './fixtures.js';
import { orElse } from './processes.js';

export interface Endpoint {
  id: string;
  label: string;
  path: string;
  /** POST bodies, cycled per connection; one request per body. Without them: a GET. */
  bodies?: string[];
  /** Sent without the X-Api-Key header. */
  keyless?: true;
  /** What a right answer looks like (a failed check is reported, the fixtures may be mis-wired). */
  check(body: any): string | null;
}

/** 12-character passwords, a small fixed set so the range cache is warm after the first round. */
export const PASSWORDS = ['Tr0ub4dor&3x', 'correcthorse', 'kX9#mP2$vL5q', 'summer2024!!', 'P@ssw0rd1234', 'qwertyuiop12', 'Zebra-Lamp-7', 'n7Vc!r2Wq&8e'];
/** Of which these appear in the range server's answers (breached), with their counts. */
export const BREACHED: Record<string, number> = { 'P@ssw0rd1234': 4312, 'summer2024!!': 87, qwertyuiop12: 152_004 };

for (const p of PASSWORDS) if ([...p].length !== 12) throw new Error(`bench password ${p} is not 12 characters`);

/**
 * Issue #29's crafted input: 128 characters drawn from "4", "7" and "0" (l33t for a, t/l, o), the costliest kind
 * of input for the l33t matcher (docs/adr/0016-honest-password-scores.md). Seeded and distinct; a fixed set, so the range cache is warm as for PASSWORDS.
 */
export const CRAFTED_PASSWORDS = ((): string[] => {
  let state = 2029;
  const next = (): number => (state = (state * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: 16 }, () => Array.from({ length: 128 }, () => '470'[next() % 3]).join(''));
})();

const expect = (ok: boolean, what: string): string | null => (ok ? null : what);
/** The password endpoint with one of the bench's password sets. */
const passwords = (id: string, label: string, set: string[]): Endpoint => ({
  id,
  label,
  path: '/api/v1/password/strength',
  bodies: set.map((password) => JSON.stringify({ password })),
  check: (b) => expect(Number.isInteger(b?.score) && typeof b?.breached === 'boolean', 'score and breached'),
});

/** Items of the bulk row: valid IBANs of five countries, cycled to 1,000 (openapi.yaml validateIbans). */
export const BULK_ITEMS = 1000;
const IBANS = ['DE89370400440532013000', 'GB82WEST12345698765432', 'FR1420041010050500013M02606', 'NL91ABNA0417164300', 'BE68539007547034'];

export const ENDPOINTS: Endpoint[] = [
  { id: 'bic', label: 'BIC', path: '/api/v1/bic/DEUTDEFF', check: (b) => expect(b?.valid === true, 'valid true') },
  { id: 'iban', label: 'IBAN', path: '/api/v1/iban/DE89370400440532013000', check: (b) => expect(b?.valid === true, 'valid true') },
  {
    id: 'iban-bulk',
    label: `IBAN bulk (POST, ${BULK_ITEMS} items)`,
    path: '/api/v1/iban/bulk',
    bodies: [JSON.stringify({ items: Array.from({ length: BULK_ITEMS }, (_, i) => IBANS[i % IBANS.length]) })],
    check: (b) => expect(b?.results?.length === BULK_ITEMS && b.results.every((r: any) => r.status === 200 && r.result.valid === true), `${BULK_ITEMS} valid results`),
  },
  {
    id: 'card',
    label: 'card (POST)',
    path: '/api/v1/creditcard/validate',
    bodies: [JSON.stringify({ cardNumber: '4571 0800 1234 5677' }), JSON.stringify({ cardNumber: '5555-5555-5555-4444' })],
    check: (b) => expect(b?.luhnValid === true && typeof b?.lastFourDigits === 'string', 'luhnValid true'),
  },
  passwords('password', 'password (POST, 12 ch)', PASSWORDS),
  passwords('password-crafted', 'password (POST, crafted 128 ch)', CRAFTED_PASSWORDS),
  {
    id: 'dns',
    label: 'DNS A,MX,TXT (warm)',
    path: `/api/v1/dns/${BENCH_DOMAIN}?type=A,MX,TXT`,
    check: (b) => expect(b?.records?.length >= 3 && b?.security?.spf?.present && b?.security?.dmarc?.present && b?.security?.dkimFound, 'records, SPF, DMARC, DKIM'),
  },
  {
    id: 'email',
    label: 'email (warm)',
    path: `/api/v1/email?address=info@${BENCH_DOMAIN}`,
    check: (b) => expect(b?.validFormat === true && b?.mxRecord === true, 'validFormat and mxRecord'),
  },
  {
    id: 'ip',
    label: 'IP',
    path: '/api/v1/ip/81.2.69.142',
    check: (b) => expect(typeof b?.countryCode === 'string' && b.countryCode.length === 2, 'countryCode'),
  },
  {
    id: 'tls',
    label: 'TLS (warm)',
    path: `/api/v1/ssl/${BENCH_DOMAIN}`,
    check: (b) => expect(b?.valid === true && b?.errorMessage === null, `valid certificate (got valid ${b?.valid}, ${b?.errorMessage})`),
  },
  { id: 'healthz', label: '/healthz', path: '/healthz', keyless: true, check: (b) => expect(b?.status === 'ok', 'status ok') },
];

export const endpoint = (id: string): Endpoint => {
  const e = ENDPOINTS.find((x) => x.id === id);
  if (!e) throw new Error(`no endpoint ${id} (have ${ENDPOINTS.map((x) => x.id).join(', ')})`);
  return e;
};

export interface RequestSpec {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The autocannon request list of an endpoint: one entry, or one per POST body. */
export function requestsFor(e: Endpoint, key: string): RequestSpec[] {
  const headers: Record<string, string> = e.keyless ? {} : { 'x-api-key': key };
  if (!e.bodies) return [{ method: 'GET', path: e.path, headers }];
  return e.bodies.map((body) => ({ method: 'POST', path: e.path, headers: { ...headers, 'content-type': 'application/json' }, body }));
}

/**
 * Send every request of an endpoint once (this also warms the service's caches): of the first answer not usable for
 * the bench (non-200, or a failed sanity check: `problem` says why), else of the last one, whether it was a 200.
 */
export async function probe(baseUrl: string, e: Endpoint, key: string) {
  const requests = requestsFor(e, key);
  for (const r of requests) {
    const res = await fetch(baseUrl + r.path, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    const body: unknown = orElse(() => JSON.parse(text), null); // not JSON: reported below
    const err = body as { code?: string; message?: string } | null;
    const failure = err?.code ? `${res.status} ${err.code}: ${err.message}` : `${res.status} ${text.slice(0, 160)}`;
    const problem = res.status !== 200 ? failure : e.check(body) && `sanity check failed: expected ${e.check(body)}`;
    if (problem || r === requests.at(-1)) return { ok: res.status === 200, problem: problem || null, headers: res.headers };
  }
  throw new Error(`${e.id}: no request to send`);
}
