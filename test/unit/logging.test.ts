// Log redaction: secrets never reach a log line, whichever shape a log call passes them in.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { accessLogger, createLogger, type AccessEntry } from '../../src/http/logging.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: createLogger('trace', sink), lines };
}

describe('logger redaction', () => {
  it.each([
    ['a top-level password', { password: 'hunter2-Secret' }],
    ['a nested card number', { req: { cardNumber: '4571080012345677' } }],
    ['a request body', { body: { password: 'hunter2-Secret', cardNumber: '4571080012345677' } }],
    ['an API key header', { req: { headers: { 'x-api-key': 'vls_SECRETSECRETSECRET' } } }],
    ['an api key field', { apiKey: 'vls_SECRETSECRETSECRET' }],
    ['a password three levels down', { ctx: { request: { body: 'x', fields: { password: 'hunter2-Secret' } } } }],
    ['a card number five levels down in snake case', { a: { b: { c: { d: { card_number: '4571080012345677' } } } } }],
    ['a capitalised X-Api-Key header', { ctx: { req: { headers: { 'X-Api-Key': 'vls_SECRETSECRETSECRET' } } } }],
    ['a card number inside an array', { items: [{ number: '4571080012345677' }] }],
    ['a secret below the depth cut', { a: { b: { c: { d: { e: { f: { g: { h: { i: { password: 'hunter2-Secret' } } } } } } } } } }],
  ])('redacts %s at trace level', (_label, fields) => {
    const { logger, lines } = capture();
    logger.trace(fields, 'event');
    logger.flush();
    const out = lines.join('');
    expect(out).toMatch(/\[redacted\]|\[cut\]/);
    expect(out).not.toMatch(/hunter2|4571080012345677|SECRETSECRET/);
  });
});

it('keeps an object met twice (not a cycle) in both places', () => {
  const { logger, lines } = capture();
  const where = { source: 'mirror' };
  logger.warn({ first: where, second: where }, 'twice');
  logger.flush();
  expect(JSON.parse(lines.join(''))).toMatchObject({ first: { source: 'mirror' }, second: { source: 'mirror' } });
});

it('keeps other fields and survives a cycle', () => {
  const { logger, lines } = capture();
  const loop: Record<string, unknown> = { kind: 'timeout', source: 'mirror' };
  loop.self = loop;
  logger.warn(loop, 'range lookup failed');
  logger.flush();
  expect(JSON.parse(lines.join(''))).toMatchObject({ kind: 'timeout', source: 'mirror', self: '[cut]', msg: 'range lookup failed' });
});

describe('access log line', () => {
  const entry: AccessEntry = {
    requestId: '0b6b9c1e-8f0e-4f7b-9a51-6d3f4c1a2b3c',
    method: 'GET',
    route: '/api/v1/bic/{bic}',
    operationId: 'validateBic',
    status: 200,
    durationMs: 0.412,
    keyId: 'key_abc',
  };

  it.each<[string, Partial<AccessEntry>]>([
    ['a matched, authenticated request', {}],
    ['no route and no key', { route: null, operationId: 'unmatched', keyId: null, status: 404 }],
    ['values that need JSON escaping', { route: '/a"b\\c', keyId: 'k\u00e9y\n' }],
    ['the same escaped value again (remembered literal)', { route: '/a"b\\c', keyId: 'k\u00e9y\n' }],
  ])('is one JSON line with the fields as given: %s', (_label, change) => {
    const { logger, lines } = capture();
    const given = { ...entry, ...change };
    accessLogger(logger).write(given);
    logger.flush();
    expect(lines).toHaveLength(1);
    expect(lines[0].endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0])).toEqual({ level: 30, time: expect.any(Number), service: 'validation-lookup', ...given });
  });

  it('goes through pino itself for a logger not made by createLogger', () => {
    const lines: string[] = [];
    const logger = pino({ base: { service: 'elsewhere' } }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    accessLogger(logger).write(entry);
    logger.flush();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({ level: 30, time: expect.any(Number), service: 'elsewhere', ...entry });
  });

  it('writes nothing below info level', () => {
    const lines: string[] = [];
    const logger = createLogger('warn', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    accessLogger(logger).write(entry);
    logger.flush();
    expect(lines).toEqual([]);
  });
});
