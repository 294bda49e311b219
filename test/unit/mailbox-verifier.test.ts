// The verifier's orchestration with scripted sessions (no socket): one flight per address, one catch-all probe per
// domain, cancel by the client, the deadline, the cache lifetimes, session slots per dialled address and in all.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSessionSlots } from '../../src/adapters/smtp/host-slots.js';
import { createMailboxVerifier, type MailboxVerifierOptions } from '../../src/adapters/smtp/mailbox-verifier.js';
import type { SmtpSessionOptions } from '../../src/adapters/smtp/smtp-client.js';
import type { SessionOutcome } from '../../src/domain/smtp-plan.js';
import type { SmtpReply } from '../../src/domain/smtp-reply.js';

type Rec = { type: 'A' | 'MX'; value: string; priority?: number };
/** A resolver over a fixed zone: name -> records. */
const resolver = (zone: Record<string, Rec[]>): MailboxVerifierOptions['resolver'] => ({
  query: async (name, type) => ({
    rcode: zone[name] ? 'NOERROR' : 'NXDOMAIN',
    records: (zone[name] ?? []).filter((r) => r.type === type).map((r) => ({ name, ttl: 60, ...r, priority: r.priority ?? null })),
  }),
});
const mx = (domain: string, ...hosts: Array<[string, string]>): Record<string, Rec[]> => ({
  [domain]: hosts.map(([name], i) => ({ type: 'MX', value: name, priority: (i + 1) * 10 })),
  ...Object.fromEntries(hosts.map(([name, ip]) => [name, [{ type: 'A', value: ip }]])),
});

const ok: SmtpReply = { code: 250, enhancedCode: null };
const notFound: SmtpReply = { code: 550, enhancedCode: '5.1.1' };

/** A scripted session: each RCPT answered by `rcpt`; `gate` holds the session open until released. */
function scripted(rcpt: (address: string) => SmtpReply, gate?: Promise<void>) {
  const sessions: Array<{ address: string; rcpts: string[] }> = [];
  const session = async (o: SmtpSessionOptions): Promise<SessionOutcome> => {
    const rec = { address: o.address, rcpts: [] as string[] };
    sessions.push(rec);
    if (gate) await Promise.race([gate, new Promise((r) => o.signal?.addEventListener('abort', r))]);
    if (o.signal?.aborted) return { kind: 'unreachable', cause: 'timeout' };
    const replies: SmtpReply[] = [];
    for (let to = o.next(replies, { smtpUtf8: true }); to !== null; to = o.next(replies, { smtpUtf8: true })) {
      rec.rcpts.push(to);
      replies.push(rcpt(to));
    }
    return { kind: 'answered', replies, tls: false, cut: null };
  };
  return { sessions, session };
}

const base = (zone: Record<string, Rec[]>, session: MailboxVerifierOptions['session'], extra: Partial<MailboxVerifierOptions> = {}): MailboxVerifierOptions => ({
  resolver: resolver(zone),
  allowPrivate: true,
  port: 25,
  heloName: 'verifier.example.net',
  mailFrom: 'check@verifier.example.net',
  timeoutMs: 1000,
  maxPerHost: 2,
  proxy: null,
  session,
  ...extra,
});

const deferred = () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { gate, release };
};
const flush = () => new Promise((r) => setImmediate(r));

afterEach(() => vi.useRealTimers());

describe('one flight per address, one probe per domain', () => {
  it('ten concurrent verifications of one address: one session, one answer', async () => {
    const { gate, release } = deferred();
    const s = scripted((a) => (a.startsWith('alice') || a.startsWith('q') ? ok : notFound), gate);
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), s.session));
    const all = Promise.all(Array.from({ length: 10 }, () => v.verify('d.test', ['alice'])));
    await flush();
    release();
    const answers = (await all).flat();
    expect(answers.every((a) => a.status === 'risky' && a.reason === 'catch_all')).toBe(true);
    expect(s.sessions).toHaveLength(1);
  });

  it('concurrent verifications of different addresses at one domain: the catch-all probe sent once, both answers use it', async () => {
    const { gate, release } = deferred();
    const s = scripted(() => ok, gate);
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), s.session));
    const both = Promise.all([v.verify('d.test', ['a']), v.verify('d.test', ['b'])]);
    await flush();
    release();
    const [[a], [b]] = await both;
    expect(s.sessions.flatMap((x) => x.rcpts).filter((r) => r.startsWith('q'))).toHaveLength(1);
    expect([a.reason, b.reason]).toEqual(['catch_all', 'catch_all']);
  });
});

describe('cancel and deadline', () => {
  it('the only client gone: its session is aborted and nothing is cached', async () => {
    const { gate } = deferred(); // never released
    const s = scripted(() => ok, gate);
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), s.session));
    const client = new AbortController();
    const answer = v.verify('d.test', ['a'], client.signal);
    await vi.waitFor(() => expect(s.sessions).toHaveLength(1));
    client.abort();
    expect((await answer)[0]).toMatchObject({ status: 'unknown' });
    expect(v.stats().cacheEntries).toBe(0);
  });

  it('a request after every client of a flight left: a new session, not the cut-short answer', async () => {
    const hanging = scripted(() => ok, new Promise(() => undefined)); // answers only an abort
    const answering = scripted(() => ok);
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), (o) => (hanging.sessions.length === 0 ? hanging : answering).session(o)));
    const client = new AbortController();
    const first = v.verify('d.test', ['a'], client.signal);
    await vi.waitFor(() => expect(hanging.sessions).toHaveLength(1));
    client.abort();
    const second = v.verify('d.test', ['a']);
    expect((await first)[0].status).toBe('unknown');
    expect((await second)[0]).toMatchObject({ status: 'risky', reason: 'catch_all' });
    expect(answering.sessions).toHaveLength(1);
  });

  it('one of two clients gone: the flight goes on for the other', async () => {
    const { gate, release } = deferred();
    const s = scripted(() => ok, gate);
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), s.session));
    const gone = new AbortController();
    const first = v.verify('d.test', ['a'], gone.signal);
    const second = v.verify('d.test', ['a'], new AbortController().signal);
    await vi.waitFor(() => expect(s.sessions).toHaveLength(1));
    gone.abort();
    release();
    expect((await second)[0]).toMatchObject({ status: 'risky', reason: 'catch_all' });
    expect((await first)[0].reason).toBe('catch_all');
  });

  it('SMTP_DEADLINE_MS: a session that never ends is cut, unknown/timeout (fake timers)', async () => {
    vi.useFakeTimers();
    const s = scripted(() => ok, new Promise(() => undefined));
    const v = createMailboxVerifier(base(mx('d.test', ['mx1.d.test', '127.0.0.10'], ['mx2.d.test', '127.0.0.11']), s.session, { deadlineMs: 30_000 }));
    const answer = v.verify('d.test', ['a']);
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await answer)[0]).toMatchObject({ status: 'unknown', reason: 'timeout' });
    expect(s.sessions.map((x) => x.address)).toEqual(['127.0.0.10']);
  });
});

describe('cache lifetimes', () => {
  it('a blocked verdict is kept the short time only, a definitive one the long time', async () => {
    const clock = { t: 1000, now: () => clock.t }; // lru-cache reads a start of 0 as "no start"
    const s = scripted((a) => (a.startsWith('b') ? { code: 550, enhancedCode: '5.7.1' } : notFound));
    const v = createMailboxVerifier(base(mx('d.test', ['mx.d.test', '127.0.0.10']), s.session, { unknownTtlMs: 1000, definitiveTtlMs: 100_000, clock }));
    expect((await v.verify('d.test', ['blocked', 'gone'])).map((d) => d.reason)).toEqual(['blocked', 'mailbox_not_found']);
    clock.t += 2000;
    await v.verify('d.test', ['blocked', 'gone']);
    expect(s.sessions.flatMap((x) => x.rcpts)).toEqual(['blocked@d.test', 'gone@d.test', 'blocked@d.test']);
  });
});

describe('the listed-verifier signal', () => {
  it('most sessions at five domains refused by policy: listed, one warning line, no address or domain in it', async () => {
    const warnings: Array<[object, string | undefined]> = [];
    const logger = { debug: () => undefined, warn: (o: object, m?: string) => void warnings.push([o, m]) };
    const zone = Object.assign({}, ...[1, 2, 3, 4, 5, 6].map((i) => mx(`d${i}.test`, [`mx.d${i}.test`, `127.0.0.${10 + i}`])));
    const s = scripted(() => ({ code: 554, enhancedCode: '5.7.1' }));
    const v = createMailboxVerifier(base(zone, s.session, { logger }));
    for (let i = 1; i <= 6; i++) await v.verify(`d${i}.test`, [`user${i}`]);
    expect(v.stats().listed).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toMatch(/user\d|d\d\.test/);
  });
});

describe('session slots', () => {
  it('per address and in all; a cancelled wait leaves the queue holding nothing', async () => {
    const slots = createSessionSlots(1, 2);
    const a = await slots.acquire('127.0.0.1');
    const b = await slots.acquire('127.0.0.2');
    const waiting = new AbortController();
    const queued = slots.acquire('127.0.0.1', waiting.signal);
    const third = slots.acquire('127.0.0.3'); // the process cap: waits while holding 127.0.0.3's slot
    await flush();
    expect([slots.inFlight(), slots.held('127.0.0.1'), slots.held('127.0.0.3')]).toEqual([2, 1, 1]);
    waiting.abort(new Error('gone'));
    await expect(queued).rejects.toThrow('gone');
    a();
    const c = await third;
    expect([slots.inFlight(), slots.held('127.0.0.1')]).toEqual([2, 0]);
    b();
    c();
    expect(slots.inFlight()).toBe(0);
  });

  it('with a shared layer: taken after the local address slot, given back when the wait for the process slot is cancelled', async () => {
    const shared: string[] = [];
    const layer = { take: async (address: string) => (shared.push(`take ${address}`), () => void shared.push(`give ${address}`)) };
    const slots = createSessionSlots(2, 1, layer);
    const first = await slots.acquire('127.0.0.1');
    const waiting = new AbortController();
    const queued = slots.acquire('127.0.0.2', waiting.signal); // holds 127.0.0.2's shared slot, waits for the process's
    await flush();
    waiting.abort(new Error('gone'));
    await expect(queued).rejects.toThrow('gone');
    first();
    first(); // given back once
    expect(shared).toEqual(['take 127.0.0.1', 'take 127.0.0.2', 'give 127.0.0.2', 'give 127.0.0.1']);
    expect([slots.inFlight(), slots.held('127.0.0.2')]).toEqual([0, 0]);
  });
});

describe('pacing (MailboxVerifierOptions.pace)', () => {
  it('yields after the cache, after the route and before each session, and answers as without it', async () => {
    const zone = mx('d.test', ['mx.d.test', '127.0.0.10']);
    const rcpt = (a: string) => (a === 'a' ? ok : notFound);
    const steps: string[] = [];
    const s = scripted(rcpt);
    const pace = () => (steps.push('pace'), new Promise<void>((r) => setImmediate(r)));
    const paced = await createMailboxVerifier(base(zone, (o) => (steps.push('session'), s.session(o)), { pace })).verify('d.test', ['a', 'b']);
    const plain = await createMailboxVerifier(base(zone, scripted(rcpt).session)).verify('d.test', ['a', 'b']);
    expect(paced).toEqual(plain);
    const sessions = steps.filter((x) => x === 'session').length;
    expect(sessions).toBeGreaterThan(0);
    expect(steps.filter((x) => x === 'pace')).toHaveLength(2 + sessions);
    expect(steps.slice(0, 2)).toEqual(['pace', 'pace']);
  });
});
