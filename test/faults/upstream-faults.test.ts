// Upstream faults end to end: DNS, range API and TLS targets that hang, reset, answer garbage or answer late.
// Every request completes within its timeout with its documented code; no unhandled rejection, no leaked socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import {
  startFaultyDns,
  startFaultyTcp,
  type DnsFault,
  type FaultyDns,
  type FaultyTcp,
  type RangeFault,
  type TcpFault,
  unexpectedErrors,
  watchLeaks,
} from './fault-upstreams.js';
import { startUpstreams, validRequests, type Upstreams } from './fixtures.js';

// Short enough that each hanging row ends in a second or two, long enough that the rows answered in time (100 ms
// late, or TLS chunks 30 ms late over four handshakes) keep a wide margin on a starved machine.
const DNS_TIMEOUT_MS = 1500;
const PWNED_TIMEOUT_MS = 1500;
const TLS_TIMEOUT_MS = 2500;

const TLS_NAMES = ['pass', 'hang', 'stall-mid-handshake', 'reset', 'garbage', 'slow'].map((m) => `tls-${m}.faults.test`);

const leaks = watchLeaks();
let up: Upstreams;
let dnsRelay: FaultyDns;
let tlsRelay: FaultyTcp;
let h: Harness;
let closed = false;
let seq = 0;
const unique = (what: string) => `${what}-${process.pid}-${++seq}`;

async function closeAll(): Promise<void> {
  if (closed) return;
  closed = true;
  await h?.close();
  await Promise.all([dnsRelay?.close(), tlsRelay?.close(), up?.close()]);
}

beforeAll(async () => {
  leaks.start();
  up = await startUpstreams({
    tlsNames: TLS_NAMES,
    zone: {
      'faults.test': [{ type: 'SOA', data: { mname: 'ns.faults.test', rname: 'h.faults.test', minimum: 60 } }],
      ...Object.fromEntries(TLS_NAMES.map((n) => [n, [{ type: 'A' as const, data: '127.0.0.1' }]])),
    },
  });
  dnsRelay = await startFaultyDns(up.dns.port);
  tlsRelay = await startFaultyTcp(up.tls.port);
  h = await startHarness({
    ...up.env,
    DNS_SERVERS: `127.0.0.1:${dnsRelay.port}`,
    DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
    PWNED_TIMEOUT_MS: String(PWNED_TIMEOUT_MS),
    TLS_INSPECT_PORT: String(tlsRelay.port),
    TLS_TIMEOUT_MS: String(TLS_TIMEOUT_MS),
  });
});
afterAll(async () => {
  await closeAll();
  leaks.stop();
});

/**
 * One request. "In time" is the status itself: with an upstream that hangs only the request's own timeout can
 * produce the 502, and one that never fires fails the test at its timeout. No duration is measured (a loaded machine
 * makes the first password estimate alone take seconds).
 */
async function answered(path: string, init?: RequestInit) {
  return { res: await h.call(path, init) };
}

/** A name that exists in the zone (A, TXT) and was never asked before, so no cache answers for it. */
function freshName(): string {
  const name = `${unique('n')}.faults.test`;
  up.dns.set(name, [
    { type: 'A', data: '192.0.2.7' },
    { type: 'TXT', data: 'v=spf1 -all' },
  ]);
  return name;
}

describe('DNS server faults', () => {
  it.each<[DnsFault, number, number]>([
    ['hang', 0, 502],
    ['garbage', 0, 502],
    ['slow', 100, 200],
    ['slow', 3 * DNS_TIMEOUT_MS, 502],
  ])('%s (%i ms): DNS lookup answers %i in time', async (mode, delayMs, status) => {
    dnsRelay.mode = mode;
    dnsRelay.delayMs = delayMs;
    try {
      const { res } = await answered(`/api/v1/dns/${freshName()}?type=A,TXT`);
      expect(res.status).toBe(status);
      if (status === 502) expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      dnsRelay.mode = 'pass';
    }
  });

  it.each<[DnsFault, number]>([
    ['hang', 502],
    ['garbage', 502],
    ['slow', 200],
  ])('%s: email validation answers %i in time', async (mode, status) => {
    dnsRelay.mode = mode;
    dnsRelay.delayMs = 100;
    try {
      const { res } = await answered(`/api/v1/email?address=jane@${freshName()}`);
      expect(res.status).toBe(status);
    } finally {
      dnsRelay.mode = 'pass';
    }
  });

  it.each<DnsFault>(['hang', 'garbage'])('%s: TLS inspection answers 502 (resolution failed), not a grade', async (mode) => {
    dnsRelay.mode = mode;
    try {
      const { res } = await answered(`/api/v1/ssl/${freshName()}`);
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      dnsRelay.mode = 'pass';
    }
  });
});

describe('range API faults', () => {
  const check = (password: string) =>
    answered('/api/v1/password/strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });

  it.each<[RangeFault, number, number]>([
    ['hang', 0, 502],
    ['reset', 0, 502],
    ['garbage', 0, 502],
    ['bad-rows', 0, 502],
    ['redirect', 0, 502],
    ['slow', 100, 200],
    ['slow', 3 * PWNED_TIMEOUT_MS, 502],
    ['slow-body', 200, 502],
  ])('%s (%i ms): password check answers %i in time, never a silent "not breached"', async (mode, delayMs, status) => {
    up.range.mode = mode;
    up.range.delayMs = delayMs;
    try {
      const { res } = await check(unique('Fault-pw'));
      expect(res.status).toBe(status);
      if (status === 502) expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
      else expect(res.body.breached).toBe(false);
    } finally {
      up.range.mode = 'ok';
    }
  });
});

describe('TLS target faults', () => {
  it.each<[TcpFault, boolean]>([
    ['hang', false],
    ['stall-mid-handshake', false],
    ['reset', false],
    ['garbage', false],
    ['slow', true],
    ['pass', true],
  ])('%s: 200 with a grade in time (valid: %s)', async (mode, valid) => {
    tlsRelay.mode = mode;
    tlsRelay.delayMs = 30;
    try {
      const { res } = await answered(`/api/v1/ssl/tls-${mode}.faults.test`);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(valid);
      if (valid) expect(res.body.errorMessage).toBeNull();
      else expect(res.body).toMatchObject({ grade: 'F', errorMessage: expect.any(String), issuer: null });
    } finally {
      tlsRelay.mode = 'pass';
    }
  });
});

describe('shutdown', () => {
  it.each(validRequests().map((r) => [r.operationId, r] as const))('once draining, %s answers a documented 503 with Retry-After', async (_id, r) => {
    h.composition.beginDrain();
    const res = await h.call(r.path, { method: r.method, headers: r.headers, body: r.body });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('after the faults', () => {
  it('logged no unexpected error: every failure was a documented one', () => {
    h.composition.deps.logger.flush();
    expect(unexpectedErrors(h.logs)).toEqual([]);
  });

  it('left no unhandled rejection and no open socket once everything is closed', async () => {
    await closeAll();
    const { unhandled, baseline, handles } = await leaks.check();
    expect(unhandled).toBe(0);
    expect(handles).toEqual(baseline);
  });
});
