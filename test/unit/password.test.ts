// Password strength: domain pieces, then the operation through the real worker pool and a real range server.
// @module-tag slow (left out of make test-fast): loads zxcvbn in worker threads
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStrengthEstimator, type StrengthEstimator } from '../../src/adapters/password/pool.js';
import { createRangeClient } from '../../src/adapters/password/range-client.js';
import {
  MAX_ANALYSED_CHARS,
  breachCountFor,
  chooseCut,
  repeatSpans,
  mergeBreach,
  sha1Parts,
  truncateForAnalysis,
  type Strength,
} from '../../src/domain/password.js';
import { Overloaded, type ApiError } from '../../src/errors.js';
import { asApiError } from '../../src/error-answers.js';
import { createPasswordOperations } from '../../src/operations/security.js';

/** Worker start-up (tsx + dictionaries) and 128-char estimates take seconds on a busy 2-core box. */
const SLOW = 180_000;

const sha1 = (s: string): string => createHash('sha1').update(s, 'utf8').digest('hex').toUpperCase();

describe('sha1Parts', () => {
  it.each([
    ['password', '5BAA6', '1E4C9B93F3F0682250B6CF8331B7EE68FD8'],
    ['abc', 'A9993', 'E364706816ABA3E25717850C26C9CD0D89D'],
    ['', 'DA39A', '3EE5E6B4B0D3255BFEF95601890AFD80709'],
  ])('splits SHA-1(%j) into a 5-char prefix and 35-char suffix', (pw, prefix, suffix) => {
    expect(sha1Parts(pw)).toEqual({ prefix, suffix });
  });

  it('hashes the UTF-8 bytes', () => {
    const expected = createHash('sha1').update(Buffer.from('pässwörd€', 'utf8')).digest('hex').toUpperCase();
    const { prefix, suffix } = sha1Parts('pässwörd€');
    expect(prefix + suffix).toBe(expected);
  });
});

describe('truncateForAnalysis', () => {
  it('keeps the first 128 characters of a long input', () => {
    const long = 'ab'.repeat(5_000);
    expect(truncateForAnalysis(long)).toBe(long.slice(0, MAX_ANALYSED_CHARS));
  });

  it('counts code points and never splits a surrogate pair', () => {
    const cut = truncateForAnalysis('😀'.repeat(200));
    expect(Array.from(cut)).toHaveLength(128);
    expect(cut).toBe('😀'.repeat(128));
  });

  it('returns short inputs unchanged', () => {
    expect(truncateForAnalysis('short')).toBe('short');
  });
});

describe('chooseCut', () => {
  const text = 'x'.repeat(60);
  it.each([
    // [given, spans, want]
    ['nothing found: the highest index', [], 40],
    ['a word across the highest index: one letter of it', [{ i: 35, j: 44 }], 36],
    ['a word ending at the highest index - 1: the highest index', [{ i: 30, j: 39 }], 40],
    ['words back to back: one letter of the second', [{ i: 30, j: 37 }, { i: 38, j: 45 }], 39],
    ['overlapping words: one letter of the first, before the second', [{ i: 30, j: 41 }, { i: 36, j: 50 }], 31],
    ['a run over the whole range: the lowest index, its shortest split part', [{ i: 0, j: 59 }], 17],
    ['a repeat below, a two-letter word at its end, a long word across: one letter of the long word', [{ i: 0, j: 26 }, { i: 26, j: 27 }, { i: 27, j: 49 }], 28],
    ['every index splits more than a letter: the shortest split part', [{ i: 10, j: 30 }, { i: 28, j: 50 }], 31],
    ['a two-letter word across the highest index: its first letter kept', [{ i: 39, j: 40 }], 40],
    ['one letter at the highest index beats a clean cut one lower', [{ i: 39, j: 50 }, { i: 21, j: 38 }], 40],
  ])('%s', (_given, spans, want) => {
    expect(chooseCut(text, 17, 40, spans)).toBe(want);
  });

  it('is the rule itself, index by index, on generated spans', () => {
    // The rule as the doc comment states it, one index at a time: the reference for the one-pass implementation.
    const reference = (lowest: number, highest: number, spans: Array<{ i: number; j: number }>): number => {
      let best = highest;
      let bestSplit = Infinity;
      for (let q = highest; q >= lowest && bestSplit > 1; q -= 1) {
        let split = 0;
        for (const s of spans) if (s.i < q && q <= s.j) split = Math.max(split, q - s.i);
        if (split < bestSplit) [best, bestSplit] = [q, split];
      }
      return best;
    };
    const span = fc.tuple(fc.nat(59), fc.nat(30)).map(([i, length]) => ({ i, j: Math.min(59, i + length) }));
    fc.assert(
      fc.property(fc.array(span, { maxLength: 40 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 20 }), (spans, highest, below) => {
        const lowest = Math.max(1, highest - below);
        expect(chooseCut(text, lowest, highest, spans)).toBe(reference(lowest, highest, spans));
      }),
      { numRuns: 500, seed: 26 },
    );
  });

  it('never cuts a surrogate pair', () => {
    const emoji = '😀'.repeat(30);
    const cut = chooseCut(emoji, 10, 41, []);
    expect(cut).toBe(40);
    expect(emoji.slice(0, cut)).not.toMatch(/[\uD800-\uDBFF]$/);
  });
});

describe('repeatSpans', () => {
  it.each([
    ['no repeat', 'abcdef', []],
    ['one run, found by both patterns', 'xyabababz', [{ i: 2, j: 7 }, { i: 2, j: 7 }]],
    ['greedy and lazy runs', 'aabaab', [{ i: 0, j: 5 }, { i: 0, j: 1 }, { i: 3, j: 4 }]],
    ['two runs', 'aaa-bbb', [{ i: 0, j: 2 }, { i: 4, j: 6 }, { i: 0, j: 2 }, { i: 4, j: 6 }]],
  ])('%s', (_given, text, want) => {
    expect(repeatSpans(text)).toEqual(want);
  });
});

const strength = (score: number, warning = ''): Strength => ({
  score,
  guesses: 10 ** (score * 2 + 2),
  crackTimeSeconds: 1,
  crackTimeDisplay: '1 second',
  warning,
  suggestions: ['Add more words that are less common.'],
});

describe('mergeBreach', () => {
  it.each([
    [0, 0],
    [1, 1],
    [2, 1],
    [3, 1],
    [4, 1],
  ])('a breached password with score %i scores %i', (score, capped) => {
    expect(mergeBreach(strength(score), 12).score).toBe(capped);
  });

  it('a breached password warns that it appeared in data breaches, with the count', () => {
    const r = mergeBreach(strength(4, 'This is a top-10 common password.'), 3_861_493);
    expect(r).toMatchObject({ breached: true, breachCount: 3_861_493 });
    expect(r.warning).toBe('This password has appeared in data breaches 3861493 times and should never be used.');
    expect(r.suggestions[0]).toMatch(/not appeared in a data breach/);
  });

  it('says "once" for a single breach', () => {
    expect(mergeBreach(strength(3), 1).warning).toMatch(/appeared in a data breach once/);
  });

  it('leaves a password that is not breached as estimated', () => {
    expect(mergeBreach(strength(3), 0)).toEqual({ ...strength(3), breached: false, breachCount: 0 });
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('treats a nonsense count %s as not breached', (n) => {
    expect(mergeBreach(strength(3), n)).toMatchObject({ breached: false, breachCount: 0, score: 3 });
  });
});

describe('breachCountFor', () => {
  it.each([
    [new Map([['ABC', 5]]), 'abc', 5],
    [new Map([['ABC', 5]]), 'ABD', 0],
    [new Map<string, number>(), 'ABC', 0],
  ])('finds the suffix count (%#)', (range, suffix, count) => {
    expect(breachCountFor(range, suffix)).toBe(count);
  });
});

// ---------------------------------------------------------------------------------------------
// The operation, through the real worker pool and a real range server on 127.0.0.1.

interface Received {
  url: string;
  headers: string;
}

const BREACHED = 'correct horse battery staple, 1984!';
const BREACH_COUNT = 31_337;
let server: Server;
let baseUrl = '';
let received: Received[] = [];
let failWith: number | undefined;

/** Serves a padded range; the BREACHED password's suffix is in it with BREACH_COUNT. */
function rangeAnswer(prefix: string): string {
  const rows: string[] = [];
  const hit = sha1(BREACHED);
  if (hit.startsWith(prefix)) rows.push(`${hit.slice(5)}:${BREACH_COUNT}`);
  for (let i = 0; i < 10; i += 1) rows.push(`${sha1(`pad-${prefix}-${i}`).slice(5)}:0`);
  return rows.join('\r\n');
}

let estimator: StrengthEstimator;

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: JSON.stringify(req.headers) });
    if (failWith) return void res.writeHead(failWith).end();
    const m = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '');
    if (!m) return void res.writeHead(400).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(rangeAnswer(m[1]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  estimator = createStrengthEstimator({ threads: 2 });
  await Promise.all([estimator.estimate('warm-up one'), estimator.estimate('warm-up two')]);
}, SLOW);

afterAll(async () => {
  await estimator?.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  received = [];
  failWith = undefined;
});

/** openapi-backend's context as a handler gets it (the validator has checked the body: a non-empty password string). */
const request = (body: unknown): any => ({
  request: { params: {}, query: {}, requestBody: body, headers: {}, ip: '127.0.0.1' },
});

const operations = (mirrorDir?: string) =>
  createPasswordOperations({ estimator, ranges: createRangeClient({ baseUrl, timeoutMs: 2_000, mirrorDir }) });

async function apiError(r: Promise<unknown> | unknown): Promise<ApiError> {
  const p = Promise.resolve(r);
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  const api = asApiError(err);
  expect(api).not.toBeNull();
  return api as ApiError;
}

describe('checkPasswordStrength', () => {
  it('flags a breached password, caps its score at 1 and says why', async () => {
    // Without the breach this password scores well: the cap below is the breach's doing.
    expect((await estimator.estimate(BREACHED)).score).toBeGreaterThanOrEqual(3);
    const { status, body } = await operations().checkPasswordStrength(request({ password: BREACHED }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ breached: true, breachCount: BREACH_COUNT, score: 1 });
    expect(body.warning).toMatch(/appeared in data breaches 31337 times/);
  });

  it('returns the estimate and breached false for a password not in the range', async () => {
    const pw = 'Zq8#vLm2!pR7wXk4';
    const { body } = await operations().checkPasswordStrength(request({ password: pw }));
    expect(body).toEqual({ ...(await estimator.estimate(pw)), breached: false, breachCount: 0 });
    expect(body.score).toBeGreaterThanOrEqual(3);
    expect(body.crackTimeSeconds).toBeCloseTo(body.guesses / 1e10);
  });

  it('gives zxcvbn feedback for a weak password', async () => {
    const { body } = await operations().checkPasswordStrength(request({ password: 'password' }));
    expect(body.score).toBe(0);
    expect(body.warning).not.toBe('');
    expect(body.crackTimeDisplay).toBe('less than a second');
  });

  it('sends only the 5-char prefix of the hash to the range server', async () => {
    const pw = 'only-the-prefix-leaves';
    await operations().checkPasswordStrength(request({ password: pw }));
    expect(received.map((r) => r.url)).toEqual([`/range/${sha1(pw).slice(0, 5)}`]);
  });

  it('analyses a 10,000-character input, only its first 128 characters', async () => {
    const head = 'a'.repeat(MAX_ANALYSED_CHARS);
    const tail = Array.from({ length: 10_000 - MAX_ANALYSED_CHARS }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 90))).join('');
    const { body } = await operations().checkPasswordStrength(request({ password: head + tail }));
    const headOnly = await estimator.estimate(head);
    // Control: zxcvbn without our cut scores head + part of the tail differently from the head alone.
    const plain = new ZxcvbnFactory();
    expect(plain.check(head + tail.slice(0, 100)).guesses).not.toBe(plain.check(head).guesses);
    expect(body.guesses).toBe(headOnly.guesses);
    expect(received.map((r) => r.url)).toEqual([`/range/${sha1(head + tail).slice(0, 5)}`]);
  }, SLOW);

  it('answers 502 when the range service fails, never "not breached"', async () => {
    failWith = 503;
    const err = await apiError(operations().checkPasswordStrength(request({ password: 'whatever-123' })));
    expect(err).toMatchObject({ status: 502, code: 'UPSTREAM_UNAVAILABLE' });
  });
});

describe('off the event loop', () => {
  it('keeps the event loop turning while long passwords are estimated', async () => {
    const longs = Array.from({ length: 4 }, (_, k) =>
      Array.from({ length: MAX_ANALYSED_CHARS }, (_, i) => String.fromCharCode(33 + ((i * 31 + k * 17) % 90))).join(''),
    );
    let timerFired = false;
    setTimeout(() => {
      timerFired = true;
    }, 0);
    let done = false;
    const all = Promise.all(longs.map((pw) => estimator.estimate(pw))).finally(() => {
      done = true;
    });
    let turns = 0;
    while (!done) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turns += 1;
    }
    await all;
    // Run on this thread, the estimates would have finished before a single turn.
    expect(timerFired).toBe(true);
    expect(turns).toBeGreaterThan(10);
  }, SLOW);

  it('answers 503 rather than queueing without bound', async () => {
    const small = createStrengthEstimator({ threads: 1, maxQueue: 1 });
    try {
      const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => small.estimate(`queued-${i}`)));
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected.length).toBeGreaterThan(0);
      for (const r of rejected) {
        expect(r.reason).toBeInstanceOf(Overloaded);
        expect(asApiError(r.reason)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      }
    } finally {
      await small.close();
    }
  }, SLOW);

  it('refuses work after close()', async () => {
    const short = createStrengthEstimator({ threads: 1 });
    await short.close();
    const err = await short.estimate('after-close').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Overloaded);
    expect(asApiError(err)).toMatchObject({ status: 503 });
  });
});

describe('dictionaries', () => {
  it.each(['schmetterling', 'papillonbleu', 'mariposaazul'])(
    'knows de/fr/es words (%s) only with extraLanguages (PASSWORD_EXTRA_LANGUAGES=true)',
    async (word) => {
      const multilingual = createStrengthEstimator({ threads: 1, extraLanguages: true });
      try {
        const [withExtra, without] = await Promise.all([multilingual.estimate(word), estimator.estimate(word)]);
        expect(withExtra.guesses).toBeLessThan(without.guesses);
      } finally {
        await multilingual.close();
      }
    },
    SLOW,
  );
});

describe('privacy', () => {
  async function filesUnder(dir: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) out.push(...(await filesUnder(full)));
      else out.push(full);
    }
    return out;
  }

  it('the password and its full hash reach no file, request, log, stdout or stderr', async () => {
    const pw = 'Pr1vacy-Canary-7f3c9e!';
    const full = sha1(pw);
    const needles = [pw, full, full.toLowerCase(), full.slice(5), full.slice(5).toLowerCase()];
    const work = await mkdtemp(join(tmpdir(), 'pw-privacy-'));
    const mirror = await mkdtemp(join(tmpdir(), 'pw-privacy-mirror-'));
    const written: string[] = [];
    const logged: string[] = [];
    const origOut = process.stdout.write.bind(process.stdout);
    const origErr = process.stderr.write.bind(process.stderr);
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    const logger = { warn: (obj: object, msg?: string) => logged.push(JSON.stringify([obj, msg])) };
    // Anything that uses the temp dir (main thread or the fresh workers below) writes under `work`.
    const origTmp = process.env.TMPDIR;
    process.env.TMPDIR = work;
    const ownEstimator = createStrengthEstimator({ threads: 1 });
    try {
      const online = createPasswordOperations({
        estimator: ownEstimator,
        ranges: createRangeClient({ baseUrl, timeoutMs: 2_000, logger }),
      });
      const offline = createPasswordOperations({
        estimator: ownEstimator,
        ranges: createRangeClient({ baseUrl, timeoutMs: 2_000, mirrorDir: mirror, logger }),
      });
      await online.checkPasswordStrength(request({ password: pw }));
      await offline.checkPasswordStrength(request({ password: pw }));
      failWith = 500;
      const err = await apiError(
        createPasswordOperations({ estimator: ownEstimator, ranges: createRangeClient({ baseUrl, timeoutMs: 2_000, logger }) })
          .checkPasswordStrength(request({ password: pw })),
      );
      written.push(JSON.stringify([err.message, err.details, err.stack]));
    } finally {
      await ownEstimator.close();
      process.stdout.write = origOut;
      process.stderr.write = origErr;
      if (origTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = origTmp;
    }
    try {
      const files = [...(await filesUnder(work)), ...(await filesUnder(mirror))];
      const contents = await Promise.all(files.map(async (f) => `${f}\n${(await readFile(f)).toString('latin1')}`));
      const haystacks = [
        ...contents,
        ...received.map((r) => `${r.url}\n${r.headers}`),
        ...logged,
        ...written,
      ];
      expect(received.length).toBe(2); // the online check and the failing one; the mirror made none
      expect(received.every((r) => r.url === `/range/${full.slice(0, 5)}`)).toBe(true);
      expect(logged.length).toBe(1);
      for (const hay of haystacks) for (const needle of needles) expect(hay.includes(needle)).toBe(false);
    } finally {
      await rm(work, { recursive: true, force: true });
      await rm(mirror, { recursive: true, force: true });
    }
  }, SLOW);
});
