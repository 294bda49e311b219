// Email address syntax, normalisation and classification (role, disposable, free provider, typo suggestion).
import { describe, expect, it } from 'vitest';
import { loadEmailLists } from '../../src/adapters/mail/email-lists.js';
import { createEmailClassifier, editDistance, parseEmailAddress } from '../../src/domain/email.js';
import { DISPOSABLE_CORPUS, NOT_DISPOSABLE_CORPUS } from '../fixtures/email/disposable-corpus.js';

const { classifyEmail, isDisposableDomain, isFreeEmailDomain, isRoleAddress, suggestDomain } = createEmailClassifier(await loadEmailLists());

describe('parseEmailAddress: valid formats', () => {
  it.each([
    'user@example.com',
    'first.last@example.co.uk',
    'user+tag@example.com',
    "o'brien@example.ie",
    'a!#$%&*/=?^_`{|}~-z@example.com',
    '"john doe"@example.com',
    'user@sub.domain.example.org',
    'user@example.test',
    'user@xn--mnchen-3ya.de',
    'user@münchen.de',
    'ü@example.com',
    '😀@example.com',
    '€@example.com',
    '𠮷野@example.jp',
    `${'a'.repeat(64)}@example.com`,
    'user@a-b.example.museum',
  ])('%s is well-formed', (address) => {
    expect(parseEmailAddress(address).validFormat).toBe(true);
  });
});

describe('parseEmailAddress: invalid formats', () => {
  it.each([
    '',
    'plainaddress',
    '@example.com',
    'user@',
    'user@@example.com',
    'user@example',
    'user@localhost',
    'user@example.c0m',
    'user@example.123',
    'user@192.0.2.1',
    'user@[192.0.2.1]',
    'user@[IPv6:2001:db8::1]',
    'user@-example.com',
    'user@example-.com',
    'user@exa_mple.com',
    'user@example..com',
    'user@.example.com',
    'user@example.com.',
    'user@exa mple.com',
    'user@example%2ecom',
    'a\uD800@example.com',
    'a\uDE00b@example.com',
    `${'😀'.repeat(17)}@example.com`,
    'user@example.com?x',
    'user@example.com#x',
    'user@example.com?',
    '.user@example.com',
    'user.@example.com',
    'us..er@example.com',
    'us er@example.com',
    'user(comment)@example.com',
    'user,name@example.com',
    'user<x>@example.com',
    'Name <user@example.com>',
    `${'a'.repeat(65)}@example.com`,
    `user@${'a'.repeat(64)}.com`,
    `${'a'.repeat(60)}@${Array.from({ length: 4 }, () => 'b'.repeat(60)).join('.')}.com`,
  ])('%j is malformed', (address) => {
    expect(parseEmailAddress(address).validFormat).toBe(false);
  });
});

describe('parseEmailAddress: normalisation', () => {
  it('trims and lower-cases the domain but keeps the local part', () => {
    expect(parseEmailAddress('  John.Doe@Example.COM \t')).toEqual({
      email: 'John.Doe@example.com',
      user: 'John.Doe',
      domain: 'example.com',
      validFormat: true,
    });
  });

  it('converts an IDN domain to A-labels', () => {
    expect(parseEmailAddress('info@Bücher.example')).toMatchObject({
      email: 'info@xn--bcher-kva.example',
      domain: 'xn--bcher-kva.example',
    });
  });

  it('splits at the last @', () => {
    expect(parseEmailAddress('"a@b"@example.com')).toMatchObject({ user: '"a@b"', domain: 'example.com', validFormat: true });
  });

  it('keeps a domain with a URL query or fragment mark whole instead of cutting it there', () => {
    expect(parseEmailAddress('a@good.test?x')).toEqual({
      email: 'a@good.test?x',
      user: 'a',
      domain: 'good.test?x',
      validFormat: false,
      formatProblem: 'the domain is not a host name of at least two labels with an alphabetic top-level domain',
    });
  });

  it('keeps an address without @ as the user part', () => {
    expect(parseEmailAddress('nobody')).toEqual({
      email: 'nobody',
      user: 'nobody',
      domain: '',
      validFormat: false,
      formatProblem: 'there is no @ between a local part and a domain',
    });
  });
});

describe('role addresses', () => {
  it.each(['admin', 'Info', 'support', 'postmaster', 'admin+billing', 'NOREPLY+x'])('%s is a role', (user) => {
    expect(isRoleAddress(user)).toBe(true);
  });

  it.each(['jane.doe', 'j.smith+admin', '', 'administrator-jane'])('%j is not a role', (user) => {
    expect(isRoleAddress(user)).toBe(false);
  });
});

describe('disposable domains', () => {
  it.each(['mailinator.com', 'yopmail.com', 'guerrillamail.com', 'sharklasers.com', '10minutemail.com', 'maildrop.cc', 'MAILINATOR.COM'])(
    '%s is disposable',
    (domain) => {
      expect(isDisposableDomain(domain)).toBe(true);
    },
  );

  // The list's names match exactly (docs/adr/0023): a name under a listed shared dynamic-DNS domain (mooo.com, us.to
  // are listed themselves) belongs to someone else.
  it.each(['gmail.com', 'example.com', 'mailinator.com.example', 'deep.sub.mailinator.com', 'myhost.mooo.com', 'shop.us.to'])('%s is not disposable', (domain) => {
    expect(isDisposableDomain(domain)).toBe(false);
  });

  it('real mailbox providers are never flagged (the comparison corpus of docs/adr/0023)', () => {
    expect(NOT_DISPOSABLE_CORPUS.filter((d) => isDisposableDomain(d))).toEqual([]);
  });

  it('flags at least 57 of the 63 throwaway services of the comparison corpus (the figure in docs/adr/0023)', () => {
    expect(DISPOSABLE_CORPUS.filter((d) => isDisposableDomain(d)).length).toBeGreaterThanOrEqual(57);
  });
});

describe('free providers', () => {
  it.each(['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'gmx.de'])('%s is a free provider', (domain) => {
    expect(isFreeEmailDomain(domain)).toBe(true);
  });

  it.each(['example.com', 'mailinator.com', 'yopmail.com'])('%s is not a free provider', (domain) => {
    expect(isFreeEmailDomain(domain)).toBe(false);
  });
});

describe('typo suggestions', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmai.com', 'gmail.com'],
    ['gmail.con', 'gmail.com'],
    ['gnail.com', 'gmail.com'],
    ['hotmial.com', 'hotmail.com'],
    ['hotmail.cmo', 'hotmail.com'],
    ['yahooo.com', 'yahoo.com'],
    ['yhoo.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
    ['outlook.co', 'outlook.com'],
    ['iclould.com', 'icloud.com'],
    ['hotmaill.co', 'hotmail.com'],
  ])('%s → %s', (domain, expected) => {
    expect(suggestDomain(domain)).toBe(expected);
  });

  it.each(['gmail.com', 'ymail.com', 'mail.com', 'example.com', 'me.co', 'mycompany.io', 'gmx.at'])(
    'suggests nothing for %s',
    (domain) => {
      expect(suggestDomain(domain)).toBeNull();
    },
  );

  it.each([
    ['gmial', 'gmail', 1],
    ['gmail', 'gmal', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
    ['same', 'same', 0],
  ])('editDistance(%s, %s) = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});

describe('classifyEmail', () => {
  it('flags a role address at a free provider', () => {
    expect(classifyEmail(parseEmailAddress('admin+x@gmail.com'))).toEqual({
      roleAddress: true,
      disposableEmail: false,
      freeEmailProvider: true,
      didYouMean: null,
    });
  });

  it('flags a subdomain of a wildcard name, where a list has them (the shipped one has none)', () => {
    const lists = { roleLocalParts: new Set<string>(), disposableDomains: new Set<string>(), disposableWildcardDomains: new Set(['33mail.com']), freeDomains: new Set<string>() };
    const classify = createEmailClassifier(lists).classifyEmail;
    expect(classify(parseEmailAddress('bob@inbox.33mail.com')).disposableEmail).toBe(true);
    expect(classify(parseEmailAddress('bob@33mail.com.example')).disposableEmail).toBe(false);
  });

  it('suggests the corrected address', () => {
    expect(classifyEmail(parseEmailAddress('Jane.Doe@GMIAL.com')).didYouMean).toBe('Jane.Doe@gmail.com');
  });

  it('suggests a correction for a malformed domain but claims nothing else', () => {
    expect(classifyEmail(parseEmailAddress('admin@gmailcom'))).toEqual({
      roleAddress: false,
      disposableEmail: false,
      freeEmailProvider: false,
      didYouMean: 'admin@gmail.com',
    });
  });

  it('suggests nothing for a malformed local part', () => {
    expect(classifyEmail(parseEmailAddress('a..b@gmial.com')).didYouMean).toBeNull();
  });
});

describe('invisible and control characters', () => {
  it.each([
    ['zero-width space', 'jane\u200B@example.com'],
    ['right-to-left override', 'jane\u202Emoc.elpmaxe@example.com'],
    ['left-to-right mark', 'jane@exa\u200Emple.com'],
    ['soft hyphen (IDNA drops it)', 'jane@exa\u00ADmple.com'],
    ['zero-width joiner', 'ja\u200Dne@example.com'],
    ['word joiner', 'jane@example\u2060.com'],
    ['byte order mark inside', 'ja\uFEFFne@example.com'],
    ['C0 control', 'ja\u0001ne@example.com'],
    ['tab inside', 'ja\tne@example.com'],
    ['DEL', 'ja\u007Fne@example.com'],
    ['C1 control', 'ja\u0085ne@example.com'],
    ['line separator', 'ja\u2028ne@example.com'],
    ['tag character (Cf, astral)', 'jane\u{E0041}@example.com'],
  ])('%s: validFormat false, naming the character', (_name, address) => {
    const parsed = parseEmailAddress(address);
    expect(parsed.validFormat).toBe(false);
    expect(parsed.formatProblem).toMatch(/^contains an invisible or control character \(U\+[0-9A-F]{4,6}\)$/);
  });

  it('names the first such character', () => {
    expect(parseEmailAddress('a\u202Eb\u200B@example.com').formatProblem).toContain('U+202E');
  });

  it('claims nothing about such an address', () => {
    expect(classifyEmail(parseEmailAddress('info\u200B@gmail.com'))).toMatchObject({ roleAddress: false, freeEmailProvider: false });
  });
});

describe('formatProblem', () => {
  it.each([
    ['plainaddress', /no @/],
    ['@example.com', /local part .* is empty/],
    [`${'a'.repeat(65)}@example.com`, /longer than 64 octets/],
    ['user@localhost', /domain is not a host name/],
    ['us..er@example.com', /not valid address syntax/],
  ])('%s: %s', (address, reason) => {
    const parsed = parseEmailAddress(address);
    expect(parsed.validFormat).toBe(false);
    expect(parsed.formatProblem).toMatch(reason);
  });

  it('is absent for a well-formed address', () => {
    expect(parseEmailAddress('jane@example.com')).not.toHaveProperty('formatProblem');
  });
});

describe('typos that are themselves on the free list', () => {
  it.each([
    ['yaho.com', 'yahoo.com'],
    ['vahoo.com', 'yahoo.com'],
    ['hitmail.com', 'hotmail.com'],
    ['yahoo.co', 'yahoo.com'],
  ])('%s (a free provider) → %s, a far more popular one edit away', (domain, expected) => {
    expect(isFreeEmailDomain(domain)).toBe(true);
    expect(suggestDomain(domain)).toBe(expected);
  });

  it.each(['email.com', 'gmx.at', 'yahoo.de', 'hotmail.be', 'web.de'])('suggests nothing for the real provider %s', (domain) => {
    expect(suggestDomain(domain)).toBeNull();
  });
});
