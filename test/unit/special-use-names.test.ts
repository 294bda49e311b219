// Special-use and private names refused by the DNS and email operations (RFC 6761, 6762, 7686, 8375, 9476).
import { describe, expect, it } from 'vitest';
import { specialUseReason } from '../../src/domain/special-use-names.js';

describe('specialUseReason', () => {
  it.each([
    ['localhost', /RFC 6761 §6\.3/],
    ['a.b.localhost', /RFC 6761 §6\.3/],
    ['nothing.invalid', /RFC 6761 §6\.4/],
    ['printer.local', /RFC 6762 §3/],
    ['router.home.arpa', /RFC 8375/],
    ['home.arpa', /RFC 8375/],
    ['abc.onion', /RFC 7686/],
    ['x.alt', /RFC 9476/],
    ['db.internal', /ICANN/],
    ['files.corp', /Appendix G/],
    ['nas.lan', /Appendix G/],
    ['intranet', /Appendix G/],
    ['server', /single-label/],
    ['PRINTER.LOCAL.', /RFC 6762/],
  ])('%s is refused (%s)', (name, why) => {
    expect(specialUseReason(name)).toMatch(why);
  });

  it.each(['example.com', 'mail.test', 'www.example', 'localhost.example.com', 'local.example.org', 'arpa.net', 'corp.example.com', 'home.arpa.example'])(
    '%s is an ordinary name',
    (name) => {
      expect(specialUseReason(name)).toBeNull();
    },
  );
});
