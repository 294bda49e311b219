// SMTP mailbox verification beside load: bulks of addresses over fixture domains with "smtp": true against real SMTP
// servers on loopback while GET /api/v1/bic/DEUTDEFF runs as an open loop; the same BIC load without the bulks, before
// each round and once after the last, is the baseline (their median); the sessions come from the fixture's record; a
// warm-up bulk on 10 domains of its own goes first, discarded.
// Two scenarios (SMTP_BENCH_SCENARIO, default bulk):
// - bulk (issue #46): SMTP_BENCH_ADDRESSES over SMTP_BENCH_DOMAINS domains as one bulk a round, alternated with the
//   baseline; counts the SMTP sessions each bulk opened.
// - politeness (issue #55): SMTP_POLITE_ADDRESSES over 100 domains whose MX names resolve to 10 addresses (10 names per
//   address, as Microsoft 365 tenants share a few), 20 ms per RCPT, sent as concurrent bulks of 1,000. Reports the most
//   sessions one address had open at once (against SMTP_MAX_PER_HOST), total sessions, the time, and BIC's p99 during
//   the run (whole, and past the bulks' first seconds of address checks).
//   make build && node --import tsx bench/smtp-bulk.ts   (politeness: bench/smtp-politeness.ts; bench/README.md)
import { setTimeout as delay } from 'node:timers/promises';
import { median, type Measured } from './load.js';
import { waitIdle } from './processes.js';
import { HIGH_LIMITS } from './service-env.js';
import { num } from './session.js';
import { startSmtpBench, type SmtpBenchOptions } from './smtp-setup.js';
import { runBench } from './children.js';

type Sent = { s: number; statuses: Record<string, number> };
type Round = { bulkS: number; sessions: number; rcpts: number; probes: number; data: number; statuses: Record<string, number> };
interface Measures { rounds: Round[]; base: Measured[]; during: Measured[] }
type Bench = Awaited<ReturnType<typeof startSmtpBench>>;

/** Domains beyond the measured ones, for the warm-up bulk only (their DNS answers and catch-all states stay apart). */
const WARM_DOMAINS = 10;

interface Scenario {
  /** `setup.domains` is the measured `domains` plus WARM_DOMAINS. */
  setup: SmtpBenchOptions;
  domains: number;
  addresses: number;
  rounds: number;
  /** Seconds of BIC: per baseline window; from the bulks' start (about their own time on 2 cores). */
  baselineS: number;
  duringS: number;
  /** Addresses per bulk request (all sent at once); `reasons`: count `status/reason` rather than `status`. */
  chunk: number;
  reasons: boolean;
  /** Local parts' prefix in round r: fresh each round, so nothing comes from the verdict cache. */
  prefix(r: number): string;
  /** The summary printed, from the rounds (and whatever more the scenario measures with `send`). */
  report(m: Measures, bench: Bench, send: (prefix: string) => Promise<Sent>): Promise<object>;
}

function bulkScenario(): Scenario {
  const addresses = num('SMTP_BENCH_ADDRESSES', 1000);
  const domains = Math.max(1, Math.min(100, num('SMTP_BENCH_DOMAINS', 10)));
  const rounds = Math.max(1, num('SMTP_BENCH_ROUNDS', 3));
  const rcptDelayMs = num('SMTP_BENCH_RCPT_DELAY_MS', 50);
  const bic = { rate: num('BENCH_BIC_RATE', 500), connections: num('BENCH_CONNECTIONS', 16) };
  const [baselineS, duringS] = [num('BENCH_DURATION', 5), num('SMTP_BENCH_DURING', 4)];
  // Medians of the windows' percentiles (the load child reports percentiles, not every response time).
  const pooled = (ms: Measured[]) => ({
    responses: ms.reduce((a, m) => a + m.responses, 0), p50: median(ms.map((m) => m.p50)), p99: median(ms.map((m) => m.p99)),
    non2xx: ms.reduce((a, m) => a + m.non2xx + m.errors, 0),
  });
  const sessionTarget = domains * Math.ceil(Math.ceil(addresses / domains) / 20) + domains; // one per 20 addresses of a domain, plus the probes
  return {
    setup: {
      name: 'smtp-bench', domains: domains + WARM_DOMAINS, domain: (d) => `d${d}.smtp-bench.test`, ip: (d) => `127.0.1.${10 + d}`, rcptDelayMs, bic,
      // Every tenth local part is unknown (550 5.1.1), the rest accepted; the probe (q + hex) is refused.
      accepts: (local) => /^(?:r\d+-|w)\d*[1-9]$/.test(local),
      env: { ...HIGH_LIMITS, SMTP_DAILY_PER_KEY: '1000000000', LOG_LEVEL: 'info' }, // the SMTP quota too (1,000 a day by default)
    },
    addresses, domains, rounds, baselineS, duringS, chunk: Math.max(1, addresses), reasons: false, prefix: (r) => `r${r}-`,
    report: async ({ rounds: rs, base, during }) => {
      const [b, l] = [pooled(base), pooled(during)];
      return {
        settings: { addresses, domains, rounds, rcptDelayMs, bicRate: bic.rate, connections: bic.connections, baselineS, duringS },
        rounds: rs,
        bic: { baseline: b, duringBulk: l, p99Ratio: Number((l.p99 / b.p99).toFixed(3)) },
        targets: {
          sessions: `<= ${sessionTarget}: ${rs.every((r) => r.sessions <= sessionTarget) ? 'met' : 'MISSED'}`,
          noData: rs.every((r) => r.data === 0) ? 'met' : 'MISSED',
          bicP99: `within 20%: ${l.p99 <= b.p99 * 1.2 ? 'met' : 'MISSED'}`,
        },
      };
    },
  };
}

function politenessScenario(): Scenario {
  const addresses = num('SMTP_POLITE_ADDRESSES', 10_000);
  const [domains, servers, maxPerHost, rcptDelayMs] = [100, 10, 2, 20];
  const bic = { rate: num('BENCH_BIC_RATE', 500), connections: 16 };
  const [baselineS, duringS] = [num('BENCH_DURATION', 10), num('SMTP_POLITE_DURING', 12)];
  /**
   * A second round with fresh addresses measures BIC only from this many seconds after the bulks' start, for
   * sessionsS: past the first seconds, in which the service checks the 10,000 addresses' syntax, lists and DNS (the
   * same bulks without SMTP cost BIC as much on their own), only the SMTP sessions run.
   */
  const [sessionsFromS, sessionsS] = [num('SMTP_POLITE_SESSIONS_FROM', 4), num('SMTP_POLITE_SESSIONS', 8)];
  return {
    setup: {
      name: 'smtp-polite', domains: domains + WARM_DOMAINS, domain: (d) => `d${d}.polite.test`, ip: (d) => `127.0.2.${10 + (d % servers)}`, rcptDelayMs, bic,
      // Local parts ending in 0 unknown (550 5.1.1), the rest accepted; the catch-all probe (q + hex) is refused.
      accepts: (local) => /^[prw]\d*[1-9]$/.test(local),
      env: { RATE_LIMITS: 'off', LOG_LEVEL: 'warn', SMTP_MAX_PER_HOST: String(maxPerHost) },
    },
    addresses, domains, rounds: 1, baselineS, duringS, chunk: 1000, reasons: true, prefix: () => 'p',
    report: async ({ rounds: [one], base, during: [loaded] }, { load, figures }, send) => {
      const baseP99 = median(base.map((b) => b.p99));
      // Round two: BIC from sessionsFromS after the bulks' start (fresh addresses: no verdict from the cache).
      const bulks2 = send('r');
      await delay(sessionsFromS * 1000);
      const sessionPhase = await load(sessionsS);
      await bulks2;
      const maxPerAddress = figures().maxConcurrent;
      return {
        settings: { addresses, domains, serverAddresses: servers, rcptDelayMs, maxPerHost, bicRate: bic.rate, baselineS, duringS, sessionsFromS, sessionsS },
        seconds: one.bulkS, sessions: one.sessions, rcpts: one.rcpts, data: one.data,
        maxSessionsToOneAddress: maxPerAddress, statuses: one.statuses, // the most sessions at once: over both rounds
        bic: { // p99s, ms: the baselines before and after the bulks (the ratios to their median), during, the session phase
          baselineP99: base.map((b) => b.p99), duringP99: loaded.p99, p99Ratio: Number((loaded.p99 / baseP99).toFixed(3)),
          loadSendGapMs: [...base, loaded, sessionPhase].map((m) => Math.round(m.sendGapMs ?? 0)), // over ~10: a disturbed client
          sessionPhaseP99: sessionPhase.p99, sessionPhaseRatio: Number((sessionPhase.p99 / baseP99).toFixed(3)),
          non2xx: [...base, loaded, sessionPhase].reduce((a, m) => a + m.non2xx + m.errors, 0),
        },
        targets: { perAddress: maxPerAddress <= maxPerHost ? 'met' : 'MISSED', bicP99: loaded.p99 <= baseP99 * 1.2 ? 'met' : 'MISSED' },
      };
    },
  };
}

const SCENARIOS: Record<string, () => Scenario> = { bulk: bulkScenario, politeness: politenessScenario };

async function main(name: string): Promise<void> {
  const s = SCENARIOS[name]?.();
  if (!s) throw new Error(`SMTP_BENCH_SCENARIO must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  const bench = await startSmtpBench(s.setup);
  /** Address i at domain i % domains, `chunk` to a request, all sent at once; resolves with the seconds taken. */
  const send = async (prefix: string, count = s.addresses, domain = (i: number) => i % s.domains): Promise<Sent> => {
    const t0 = performance.now();
    const all = Array.from({ length: count }, (_, i) => `${prefix}${i}@${s.setup.domain(domain(i))}`);
    const chunks = Array.from({ length: Math.ceil(all.length / s.chunk) }, (_, c) => all.slice(c * s.chunk, (c + 1) * s.chunk));
    const statuses: Record<string, number> = {};
    for (const counts of await Promise.all(chunks.map((items) => bench.bulk(items, s.reasons)))) for (const [k, v] of Object.entries(counts)) statuses[k] = (statuses[k] ?? 0) + v;
    return { s: (performance.now() - t0) / 1000, statuses };
  };
  const m: Measures = { rounds: [], base: [], during: [] };
  try {
    await bench.load(5); // warm-up: after 1 s, V8 still optimised the BIC path through the first seconds of the baseline
    // One bulk on the warm-up domains, discarded: V8 compiles the email path once per process (start-up cost, as the
    // fixed bench's warm-up rows), so the rounds measure bulks, not the first compilation. The same for both sides.
    await send('w', Math.min(1000, s.addresses), (i) => s.domains + (i % WARM_DOMAINS));
    await waitIdle(bench.svc.pid, 15); // what the warm-up left (sessions' QUITs, collections) ends before the baseline
    for (let r = 0; r < s.rounds; r++) {
      m.base.push(await bench.load(s.baselineS));
      bench.smtp.reset();
      // BIC for duringS seconds; the bulks are sent once that load has begun.
      const loaded = await bench.loadBegun(s.duringS);
      const sent = send(s.prefix(r));
      m.during.push(await loaded.run);
      const { s: secs, statuses } = await sent;
      const { sessions, rcpts, probes, data } = bench.figures();
      m.rounds.push({ bulkS: Number(secs.toFixed(2)), sessions, rcpts, probes, data, statuses });
      await waitIdle(bench.svc.pid, 15);
    }
    m.base.push(await bench.load(s.baselineS)); // after the last round too: the baseline on both sides of the bulks
    console.log(JSON.stringify(await s.report(m, bench, send), null, 2));
  } finally {
    await bench.close();
  }
}

const scenario = process.env.SMTP_BENCH_SCENARIO ?? 'bulk';
runBench(scenario === 'bulk' ? 'smtp-bulk' : `smtp-${scenario}`, () => main(scenario));
