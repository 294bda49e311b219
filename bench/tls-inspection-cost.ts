// What configuration probing costs one cold TLS inspection: the full inspection (handshake + TLS 1.2/1.1/1.0 probes at
// once + HSTS) against the single handshake it used to be, on a loopback TLS 1.2-1.3 server (docs/adr/0017).
// Run: node --import tsx bench/tls-inspection-cost.ts [--rounds 30]
import { parseArgs } from 'node:util';
import { createTlsProber } from '../src/adapters/tls/prober.js';
import { createTrustStore } from '../src/adapters/tls/cert.js';
import { inspectionContext, tlsHandshake } from '../src/adapters/tls/connect.js';
import { startValidTlsTarget } from '../test/support/tls-fixtures.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const rounds = Number(values.rounds);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { server, pki } = await startValidTlsTarget('Bench', ['bench.test'], { hsts: 'max-age=31536000' });
const resolve = async (): Promise<string[]> => ['127.0.0.1'];
const prober = createTlsProber({ resolve, port: server.port, timeoutMs: 5000, allowPrivate: true, extraCaPem: pki.root.certPem, cacheEntries: 1, cacheTtlMs: 1 });
const context = inspectionContext(createTrustStore(pki.root.certPem).pems);
const full: number[] = [];
const single: number[] = [];
for (let i = 0; i < rounds; i++) {
  let t = performance.now();
  const r = await prober.inspect(i % 2 === 0 ? 'bench.test' : '127.0.0.1');
  full.push(performance.now() - t);
  if (r.protocolSupport === null) throw new Error(`inspection failed: ${r.errorMessage}`);
  t = performance.now();
  const socket = await tlsHandshake({ address: '127.0.0.1', port: server.port, servername: 'bench.test', timeoutMs: 5000, secureContext: context });
  single.push(performance.now() - t);
  socket.destroy();
}
await server.close();
console.log(`rounds ${rounds}: full inspection p50 ${median(full).toFixed(1)} ms, single handshake p50 ${median(single).toFixed(1)} ms, ratio ${(median(full) / median(single)).toFixed(1)}x`);
