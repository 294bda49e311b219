// Email operation (openapi.yaml tag Email): address syntax (RFC 5321/5322), MX (RFC 7505 null MX) and A/AAAA, list checks.
import type { DnsResolver } from '../adapters/dns-resolver.js';
import { parseEmailAddress, type EmailClassifier } from '../domain/email.js';
import { missingParameter } from '../errors.js';
import type { OperationHandler } from './types.js';

export interface EmailDeps {
  resolver: DnsResolver;
  /** Role, disposable, free-provider and typo classification over the reference lists loaded at start. */
  email: EmailClassifier;
}

export function createEmailOperations(deps: EmailDeps): { validateEmail: OperationHandler<'validateEmail'> } {
  const { resolver } = deps;
  return {
    /** The validator guarantees a string of at most 320 characters; an empty one is the address left out. */
    async validateEmail({ request }) {
      const address = request.query.address;
      if (address === undefined || address === '') throw missingParameter('address');
      const parsed = parseEmailAddress(address);
      let mxRecord = false;
      let aRecord = false;
      if (parsed.validFormat) {
        const [mx, a, aaaa] = await Promise.all([
          resolver.query(parsed.domain, 'MX'),
          resolver.query(parsed.domain, 'A'),
          resolver.query(parsed.domain, 'AAAA'),
        ]);
        // A null MX (RFC 7505: "0 .") says the domain accepts no mail: no MX.
        mxRecord = mx.records.some((r) => r.value !== '.' && r.value !== '');
        aRecord = a.records.length > 0 || aaaa.records.length > 0;
      }
      return {
        status: 200,
        body: {
          email: parsed.email,
          user: parsed.user,
          domain: parsed.domain,
          validFormat: parsed.validFormat,
          mxRecord,
          aRecord,
          ...deps.email.classifyEmail(parsed),
        },
      };
    },
  };
}
