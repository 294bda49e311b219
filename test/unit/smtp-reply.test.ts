// The reply mapping of SMTP mailbox verification (RFC 5321 reply codes, RFC 3463 enhanced codes): codes first, the
// reply-text table where they leave the mailbox open (docs/adr/0028). The real-reply corpus: smtp-reply-corpus.test.ts.
import { describe, expect, it } from 'vitest';
import {
  catchAllOf,
  enhancedCodeOf,
  isDefinitive,
  recipientDeliverability,
  recipientVerdict,
  sessionRefusal,
  tooManyRecipients,
} from '../../src/domain/smtp-reply.js';

describe('enhancedCodeOf', () => {
  it.each([
    [550, '5.1.1 <x@y>: Recipient address rejected', '5.1.1'],
    [250, '2.1.5 Ok', '2.1.5'],
    [450, '4.7.1 Greylisted, try again', '4.7.1'],
    [554, '5.7.001 listed', '5.7.1'],
    [550, 'No such user', null],
    [550, '4.1.1 class differs from the reply code', null],
    [250, '5.1.1 not the class of a 250', null],
    [550, '5.1.1.', null],
    [550, '', null],
    [220, 'mx.example ESMTP', null],
    [553, "sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", '5.7.1'],
    [550, 'Sorry, no mailbox here by that name. (#5.1.1)', '5.1.1'],
    [421, 'temporary envelope failure (#4.3.0)', '4.3.0'],
    [550, 'listed (#4.7.1)', null],
    [450, 'Please try again later. (#id-5.9.4)', null],
    [550, '5.1.1 leading wins over (#5.7.1)', '5.1.1'],
  ])('%i "%s" -> %s', (code, text, expected) => {
    expect(enhancedCodeOf(code, text)).toBe(expected);
  });
});

describe('recipientVerdict', () => {
  it.each([
    [250, null, 'deliverable', 'accepted'],
    [250, '2.1.5', 'deliverable', 'accepted'],
    [251, '2.1.5', 'deliverable', 'accepted'],
    [550, '5.1.1', 'undeliverable', 'mailbox_not_found'],
    [551, '5.1.6', 'undeliverable', 'mailbox_not_found'],
    [553, '5.1.3', 'undeliverable', 'mailbox_not_found'],
    [550, null, 'unknown', 'rejected'],
    [551, null, 'unknown', 'rejected'],
    [553, null, 'unknown', 'rejected'],
    [550, '5.0.0', 'unknown', 'rejected'],
    [554, '5.1.1', 'undeliverable', 'mailbox_not_found'],
    [556, '5.1.10', 'undeliverable', 'mailbox_not_found'],
    [550, '5.2.1', 'undeliverable', 'mailbox_disabled'],
    [554, '5.2.1', 'undeliverable', 'mailbox_disabled'],
    [552, '5.2.2', 'risky', 'mailbox_full'],
    [552, null, 'risky', 'mailbox_full'],
    [550, '5.2.2', 'risky', 'mailbox_full'],
    [450, '4.7.1', 'unknown', 'greylisted'],
    [450, null, 'unknown', 'greylisted'],
    [451, '4.3.0', 'unknown', 'greylisted'],
    [452, '4.5.3', 'unknown', 'greylisted'],
    [452, '4.2.2', 'risky', 'mailbox_full'],
    [421, '4.7.0', 'unknown', 'greylisted'],
    [554, '5.7.1', 'unknown', 'blocked'],
    [550, '5.7.1', 'unknown', 'blocked'],
    [550, '5.7.606', 'unknown', 'blocked'],
    [554, null, 'unknown', 'rejected'],
    [550, '5.4.1', 'unknown', 'rejected'],
    [501, '5.5.4', 'unknown', 'rejected'],
    [550, '5.2.0', 'unknown', 'mailbox_unavailable'],
    [550, '5.2.4', 'unknown', 'mailbox_unavailable'],
    [550, '5.1.7', 'unknown', 'blocked'],
    [550, '5.1.0', 'unknown', 'rejected'],
    [552, '5.1.1', 'unknown', 'rejected'],
    [554, '5.0.0', 'unknown', 'rejected'],
  ])('%i %s -> %s/%s', (code, enhancedCode, status, reason) => {
    expect(recipientVerdict({ code, enhancedCode })).toEqual({ status, reason });
  });
});

describe('recipientVerdict: where the codes leave the mailbox open, the text decides', () => {
  it.each([
    [550, null, 'No such user here', 'undeliverable', 'mailbox_not_found'],
    [554, null, "delivery error: dd This user doesn't have a yahoo.com account", 'undeliverable', 'mailbox_not_found'],
    [554, null, 'The email account that you tried to reach is disabled', 'undeliverable', 'mailbox_disabled'],
    [550, null, 'user has too many messages on the server', 'risky', 'mailbox_full'],
    [550, null, 'Rejected because 203.0.113.9 is in a black list at b.barracudacentral.org', 'unknown', 'blocked'],
    [550, null, 'Requested action not taken: mailbox unavailable', 'unknown', 'rejected'],
    [552, null, 'Requested mail action aborted: exceeded storage allocation', 'risky', 'mailbox_full'],
    [552, null, 'message refused', 'risky', 'mailbox_full'],
    [550, '5.1.1', 'sender is blocklisted', 'unknown', 'blocked'],
    [550, '5.2.1', 'receiving mail at a rate that prevents additional messages', 'unknown', 'greylisted'],
    [550, '5.2.0', 'No such mailbox', 'undeliverable', 'mailbox_not_found'],
    [550, '5.7.1', 'No such user!', 'unknown', 'blocked'],
    [451, '4.1.1', 'user over quota', 'risky', 'mailbox_full'],
    [450, '4.1.1', 'no such user', 'unknown', 'greylisted'],
  ])('%i %s "%s" -> %s/%s', (code, enhancedCode, text, status, reason) => {
    expect(recipientVerdict({ code, enhancedCode, text })).toEqual({ status, reason });
  });
});

describe('sessionRefusal (greeting, EHLO/HELO, MAIL FROM)', () => {
  it.each([
    [554, '5.7.1', 'blocked'],
    [554, null, 'blocked'],
    [550, '5.1.1', 'blocked'], // a refused sender judges no mailbox
    [421, '4.7.0', 'greylisted'],
    [451, null, 'greylisted'],
  ])('%i %s -> unknown/%s', (code, enhancedCode, reason) => {
    expect(sessionRefusal({ code, enhancedCode })).toEqual({ status: 'unknown', reason });
  });
});

describe('catch-all', () => {
  it.each([
    [{ code: 250, enhancedCode: '2.1.5' }, true],
    [{ code: 550, enhancedCode: '5.1.1' }, false],
    [{ code: 550, enhancedCode: null }, null],
    [{ code: 550, enhancedCode: null, text: 'No such user here' }, false],
    [{ code: 452, enhancedCode: '4.5.3' }, null],
    [{ code: 450, enhancedCode: '4.7.1' }, null],
    [{ code: 554, enhancedCode: '5.7.1' }, null],
    [null, null],
  ])('a probe answered %j says catch-all %s', (probe, expected) => {
    expect(catchAllOf(probe)).toBe(expected);
  });

  const at = { mxHost: 'mx.example.com', tls: false };
  it('makes an accepted address at a catch-all domain risky/catch_all', () => {
    expect(recipientDeliverability({ code: 250, enhancedCode: null }, true, at)).toEqual({
      status: 'risky', reason: 'catch_all', catchAll: true, mxHost: 'mx.example.com', smtpCode: 250, enhancedCode: null, tls: false,
    });
  });
  it('keeps an accepted address deliverable when the probe is not known (a 452 to the second RCPT)', () => {
    expect(recipientDeliverability({ code: 250, enhancedCode: '2.1.5' }, null, at)).toMatchObject({ status: 'deliverable', reason: 'accepted', catchAll: null });
  });
  it('says a domain that refused the address as unknown is no catch-all', () => {
    expect(recipientDeliverability({ code: 550, enhancedCode: '5.1.1' }, null, at)).toMatchObject({ status: 'undeliverable', catchAll: false });
  });
  it('never turns a deferral into a verdict through the probe', () => {
    expect(recipientDeliverability({ code: 450, enhancedCode: '4.7.1' }, true, at)).toMatchObject({ status: 'unknown', reason: 'greylisted' });
  });
});

describe('tooManyRecipients and isDefinitive', () => {
  it.each([
    [452, '4.5.3', true],
    [452, null, true],
    [452, '4.2.2', false],
    [451, '4.5.3', false],
  ])('%i %s too many recipients: %s', (code, enhancedCode, expected) => {
    expect(tooManyRecipients({ code, enhancedCode })).toBe(expected);
  });
  it.each([
    ['deliverable', true],
    ['undeliverable', true],
    ['risky', true],
    ['unknown', false],
    ['not_checked', false],
  ] as const)('%s is definitive: %s', (status, expected) => {
    expect(isDefinitive({ status, reason: 'accepted', catchAll: null, mxHost: null, smtpCode: null, enhancedCode: null, tls: null })).toBe(expected);
  });
});
