// TLS certificate inspection (openapi.yaml inspectTlsCertificate; RFC 8446, RFC 5280): the prober, built at the first
// inspection or once the server listens, whichever comes first; its trust store and TLS contexts (~0.1-0.2 s of CPU,
// no file read: TLS_EXTRA_CA_FILE is read and checked at start) are not needed by the start-up.
import { readCaBundle } from '../adapters/files/startup-files.js';
import { createTlsProber, type TlsProber } from '../adapters/tls/prober.js';
import { addressResolver, type TargetGuardOptions } from '../adapters/tls/target-guard.js';
import { createTlsOperations } from '../operations/network.js';
import { defineCapability } from './capability.js';

/** Outbound TLS under the inspection's guard, port, timeout and trust anchors (MTA-STS policy fetches use it too). */
interface TlsClientOptions extends TargetGuardOptions {
  port: number;
  timeoutMs: number;
  extraCaPem?: string;
}

declare module './capability.js' {
  interface Provided {
    tlsClient: TlsClientOptions;
  }
}

export const tls = defineCapability({
  name: 'tls',
  config: ['tlsExtraCaFile', 'tlsInspectPort', 'tlsTimeoutMs', 'allowPrivateTargets'],
  async start({ config, resolver, metrics, provide }) {
    const extraCaPem = config.tlsExtraCaFile ? await readCaBundle('TLS_EXTRA_CA_FILE', config.tlsExtraCaFile) : undefined;
    const client: TlsClientOptions = { resolve: addressResolver(resolver), port: config.tlsInspectPort, timeoutMs: config.tlsTimeoutMs, extraCaPem, allowPrivate: config.allowPrivateTargets };
    provide('tlsClient', client);
    let built: TlsProber | null = null;
    const prober = () => (built ??= createTlsProber(client));
    const stats = () => built?.stats() ?? { cacheEntries: 0, cacheHits: 0, cacheMisses: 0, connections: 0 };
    metrics.addCache('tls', () => {
      const s = stats();
      return { hits: s.cacheHits, misses: s.cacheMisses, size: s.cacheEntries };
    });
    return {
      handlers: createTlsOperations({ tls: { inspect: (domain) => prober().inspect(domain), stats } }),
      listening: () => void prober(),
    };
  },
});
