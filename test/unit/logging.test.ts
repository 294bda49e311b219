// Log redaction: secrets never reach a log line, whichever shape a log call passes them in.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/http/logging.js';

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
  ])('redacts %s at trace level', (_label, fields) => {
    const { logger, lines } = capture();
    logger.trace(fields, 'event');
    logger.flush();
    const out = lines.join('');
    expect(out).toContain('[redacted]');
    expect(out).not.toMatch(/hunter2|4571080012345677|SECRETSECRET/);
  });
});
