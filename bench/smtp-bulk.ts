// SMTP mailbox verification under load (issue #46): a bulk of SMTP_BENCH_ADDRESSES addresses over SMTP_BENCH_DOMAINS
// fixture domains with "smtp": true against real SMTP servers on loopback, while GET /api/v1/bic/DEUTDEFF runs as an
// open loop; the same BIC load without the bulk, alternated, is the baseline. Counts the SMTP sessions the bulk opened.
//   make build && node --import tsx bench/smtp-bulk.ts          (settings: bench/README.md, "SMTP bulk")
import { median, type Measured } from './load.js';
import { HIGH_LIMITS } from './service-env.js';
import { num } from './session.js';
import { startSmtpBench } from './smtp-setup.js';
import { runBench } from './children.js';

const ADDRESSES = num('SMTP_BENCH_ADDRESSES', 1000);
const DOMAINS = Math.max(1, Math.min(100, num('SMTP_BENCH_DOMAINS', 10)));
const ROUNDS = Math.max(1, num('SMTP_BENCH_ROUNDS', 3));
const DELAY_MS = num('SMTP_BENCH_RCPT_DELAY_MS', 50);
const BIC_RATE = num('BENCH_BIC_RATE', 500);
const CONNECTIONS = num('BENCH_CONNECTIONS', 16);
/** The baseline's length per round, seconds; the loaded side runs as long as the bulk does. */
const BASELINE_S = num('BENCH_DURATION', 5);
/** Seconds of BIC load from the bulk's start: about the bulk's own time (3.5 s for the defaults on 2 cores). */
const DURING_S = num('SMTP_BENCH_DURING', 4);

const domain = (d: number) => `d${d}.smtp-bench.test`;
const hostIp = (d: number) => `127.0.1.${10 + d}`;

async function main(): Promise<void> {
  const { smtp, load, loadBegun, figures, bulk, close } = await startSmtpBench({
    name: 'smtp-bench',
    domains: DOMAINS,
    domain,
    ip: hostIp,
    rcptDelayMs: DELAY_MS,
    // Every tenth local part is unknown (550 5.1.1), the rest accepted; the probe (q + hex) is refused.
    accepts: (local) => /^r\d+-\d*[1-9]$/.test(local),
    env: { ...HIGH_LIMITS, LOG_LEVEL: 'info' },
    bic: { rate: BIC_RATE, connections: CONNECTIONS },
  });
  // Medians of the rounds' percentiles (the load child reports percentiles, not every response time).
  const pooled = (ms: Measured[]) => ({
    responses: ms.reduce((a, m) => a + m.responses, 0),
    p50: median(ms.map((m) => m.p50)),
    p99: median(ms.map((m) => m.p99)),
    non2xx: ms.reduce((a, m) => a + m.non2xx + m.errors, 0),
  });
  const rounds: Array<{ bulkS: number; sessions: number; rcpts: number; probes: number; data: number; statuses: Record<string, number> }> = [];
  const base: Measured[] = [];
  const during: Measured[] = [];
  try {
    await load(1); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      base.push(await load(BASELINE_S));
      smtp.reset();
      // Fresh local parts each round: nothing comes from the verdict cache (a domain's catch-all state may).
      const items = Array.from({ length: ADDRESSES }, (_, i) => `r${r}-${i}@${domain(i % DOMAINS)}`);
      // BIC for DURING_S seconds; the bulk is sent once that load has begun.
      const loaded = await loadBegun(DURING_S);
      const t0 = performance.now();
      const sent = bulk(items).then((statuses) => ({ s: (performance.now() - t0) / 1000, statuses }));
      during.push(await loaded.run);
      const { s, statuses } = await sent;
      const { sessions, rcpts, probes, data } = figures();
      rounds.push({ bulkS: Number(s.toFixed(2)), sessions, rcpts, probes, data, statuses });
    }
  } finally {
    await close();
  }
  const b = pooled(base);
  const l = pooled(during);
  const perDomain = Math.ceil(ADDRESSES / DOMAINS);
  const sessionTarget = DOMAINS * Math.ceil(perDomain / 20) + DOMAINS; // one per 20 addresses of a domain, plus the probes
  const summary = {
    settings: { addresses: ADDRESSES, domains: DOMAINS, rounds: ROUNDS, rcptDelayMs: DELAY_MS, bicRate: BIC_RATE, connections: CONNECTIONS, baselineS: BASELINE_S, duringS: DURING_S },
    rounds,
    bic: { baseline: b, duringBulk: l, p99Ratio: Number((l.p99 / b.p99).toFixed(3)) },
    targets: {
      sessions: `<= ${sessionTarget}: ${rounds.every((r) => r.sessions <= sessionTarget) ? 'met' : 'MISSED'}`,
      noData: rounds.every((r) => r.data === 0) ? 'met' : 'MISSED',
      bicP99: `within 20%: ${l.p99 <= b.p99 * 1.2 ? 'met' : 'MISSED'}`,
    },
  };
  console.log(JSON.stringify(summary, null, 2));
}

runBench('smtp-bulk', main);
