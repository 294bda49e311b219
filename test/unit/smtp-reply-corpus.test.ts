// The reply corpus (test/fixtures/smtp-replies/corpus.ts) read by the domain alone: every row's verdict, and never a
// false "undeliverable". The same replies go through the transport in test/contract/smtp-reply-corpus.test.ts.
import { describe, expect, it } from 'vitest';
import { recipientVerdict, replyOf } from '../../src/domain/smtp-reply.js';
import { CORPUS, codeOf } from '../fixtures/smtp-replies/corpus.js';

const verdictOf = (lines: string[]): string => {
  const v = recipientVerdict(replyOf(codeOf({ lines } as never), lines.map((l) => l.slice(4))));
  return `${v.status}/${v.reason}`;
};

describe('the real-reply corpus', () => {
  it('has at least 60 rows, each with a source', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    for (const r of CORPUS) expect(r.source.length, r.id).toBeGreaterThan(10);
  });

  it.each(CORPUS.map((r) => [r.id, r.mta, r.lines[0].slice(0, 60), r]))('%s %s: %s', (_id, _mta, _text, r) => {
    expect(verdictOf(r.lines)).toBe(r.expected);
  });

  it('answers no row undeliverable whose expected verdict is not', () => {
    const wrong = CORPUS.filter((r) => verdictOf(r.lines).startsWith('undeliverable') && !r.expected.startsWith('undeliverable'));
    expect(wrong.map((r) => r.id)).toEqual([]);
  });
});
