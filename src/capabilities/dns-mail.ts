// DNS records with the domain's mail security (openapi.yaml lookupDns; RFC 1035, 7208 SPF, 7489 DMARC, 6376 DKIM,
// 8461 MTA-STS). MTA-STS policies are fetched under the TLS inspection's guard, port, timeout and trust anchors; the
// fetcher is built like the TLS prober: at its first use or once the server listens (it parses the same trust store).
import { createMailSecurity } from '../adapters/mail/mail-security.js';
import { createMtaStsFetcher } from '../adapters/mail/mta-sts-fetch.js';
import { createDnsOperations } from '../operations/network.js';
import { defineCapability } from './capability.js';

export const dnsMail = defineCapability({
  name: 'dns-mail',
  config: ['allowPrivateTargets'],
  start({ config, resolver, need }) {
    const client = need('tlsClient');
    let fetcher: ReturnType<typeof createMtaStsFetcher> | null = null;
    const fetchNow = () => (fetcher ??= createMtaStsFetcher(client));
    const mailSecurity = createMailSecurity(resolver, (domain) => fetchNow()(domain));
    return {
      handlers: createDnsOperations({ resolver, mailSecurity, allowSpecialUse: config.allowPrivateTargets }),
      listening: () => void fetchNow(),
    };
  },
});
