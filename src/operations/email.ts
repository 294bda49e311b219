// Email operation (openapi.yaml tag Email): address syntax (RFC 5321/5322), MX (RFC 7505 null MX) and A/AAAA, list checks.
import type { DnsResolver } from '../adapters/dns/resolver.js';
import { maskEchoedEmail, parseEmailAddress, type EmailClassifier } from '../domain/email.js';
import { specialUseReason } from '../domain/special-use-names.js';
import type { OperationHandler } from './types.js';

export interface EmailDeps {
  resolver: DnsResolver;
  /** Role, disposable, free-provider and typo classification over the lists loaded now: read once per request. */
  email: () => EmailClassifier;
  /** Look up special-use and single-label domains too (ALLOW_PRIVATE_TARGETS; test set-ups only). */
  allowSpecialUse?: boolean;
}

export function createEmailOperations(deps: EmailDeps): { validateEmail: OperationHandler<'validateEmail'> } {
  const { resolver } = deps;
  return {
    /** The validator guarantees the address, 1-320 characters (absent: MISSING_PARAMETER, empty: INVALID_FORMAT). */
    async validateEmail({ request }) {
      const address = request.query.address;
      const email = deps.email(); // the lists at the start of the request, whatever a reload swaps meanwhile
      const parsed = parseEmailAddress(address);
      let mxRecord = false;
      let aRecord = false;
      // A special-use domain (printer.local) is never sent to the resolver: no MX, no A (openapi.yaml validateEmail).
      if (parsed.validFormat && (deps.allowSpecialUse || specialUseReason(parsed.domain) === null)) {
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
        // Card numbers are masked in the echoed fields; formatProblem says why validFormat is false.
        body: maskEchoedEmail({
          email: parsed.email,
          user: parsed.user,
          domain: parsed.domain,
          validFormat: parsed.validFormat,
          ...(parsed.formatProblem === undefined ? {} : { formatProblem: parsed.formatProblem }),
          mxRecord,
          aRecord,
          ...email.classifyEmail(parsed),
        }),
      };
    },
  };
}
