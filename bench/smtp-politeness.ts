// SMTP politeness per server address (issue #55): SMTP_POLITE_ADDRESSES addresses over 100 fixture domains whose MX
// names resolve to 10 addresses (10 names per address, as Microsoft 365 tenants share a few), 20 ms per RCPT, sent as
// concurrent bulks of 1,000 while GET /api/v1/bic/DEUTDEFF runs as an open loop. Reports the most sessions one
// address had open at once (the fixture's record, against SMTP_MAX_PER_HOST), total sessions, the time, and BIC's p99
// during the run (whole, and past the bulks' first seconds of address checks) against the same load without it.
//   make build && node --import tsx bench/smtp-politeness.ts          (not part of make bench)
import { setTimeout as delay } from 'node:timers/promises';
import { startSmtpBench } from './smtp-setup.js';
import { runBench } from './children.js';

const ADDRESSES = Number(process.env.SMTP_POLITE_ADDRESSES ?? 10_000);
const DOMAINS = 100;
const SERVERS = 10;
const MAX_PER_HOST = 2;
const BIC = { rate: Number(process.env.BENCH_BIC_RATE ?? 500), connections: 16, baselineS: Number(process.env.BENCH_DURATION ?? 10) };
/** Seconds of BIC load from the bulks' start: about their own time on 2 cores. */
const DURING_S = Number(process.env.SMTP_POLITE_DURING ?? 12);
/**
 * A second round with fresh addresses measures BIC only from this many seconds after the bulks' start, for
 * SESSIONS_S: past the first seconds, in which the service checks the 10,000 addresses' syntax, lists and DNS (the
 * same bulks without SMTP cost BIC as much on their own), only the SMTP sessions run.
 */
const SESSIONS_FROM_S = Number(process.env.SMTP_POLITE_SESSIONS_FROM ?? 4);
const SESSIONS_S = Number(process.env.SMTP_POLITE_SESSIONS ?? 8);

const domain = (d: number) => `d${d}.polite.test`;
const serverIp = (d: number) => `127.0.2.${10 + (d % SERVERS)}`;

/** The bulks: address i at domain i % 100, 1,000 to a request, all sent at once; resolves with the seconds taken. */
async function sendBulks(bulk: (items: string[], reasons: boolean) => Promise<Record<string, number>>, prefix: string): Promise<{ s: number; statuses: Record<string, number> }> {
  const t0 = performance.now();
  const statuses: Record<string, number> = {};
  const bulks = Array.from({ length: Math.ceil(ADDRESSES / 1000) }, (_, b) => Array.from({ length: Math.min(1000, ADDRESSES - b * 1000) }, (_, i) => `${prefix}${b * 1000 + i}@${domain((b * 1000 + i) % DOMAINS)}`));
  for (const counts of await Promise.all(bulks.map((items) => bulk(items, true)))) for (const [k, v] of Object.entries(counts)) statuses[k] = (statuses[k] ?? 0) + v;
  return { s: (performance.now() - t0) / 1000, statuses };
}

async function main(): Promise<void> {
  const { load, loadBegun, figures, bulk, close } = await startSmtpBench({
    name: 'smtp-polite',
    domains: DOMAINS,
    domain,
    ip: serverIp,
    rcptDelayMs: 20,
    // Local parts ending in 0 unknown (550 5.1.1), the rest accepted; the catch-all probe (q + hex) is refused.
    accepts: (local) => /^[pr]\d*[1-9]$/.test(local),
    env: { RATE_LIMITS: 'off', LOG_LEVEL: 'warn', SMTP_MAX_PER_HOST: String(MAX_PER_HOST) },
    bic: { rate: BIC.rate, connections: BIC.connections },
  });
  try {
    await load(1); // warm-up
    const baseline = await load(BIC.baselineS);
    const during = await loadBegun(DURING_S);
    const { s, statuses } = await sendBulks(bulk, 'p');
    const loaded = await during.run;
    const { sessions, rcpts, data } = figures(); // round one's
    // Round two: BIC from SESSIONS_FROM_S after the bulks' start (fresh addresses: no verdict from the cache).
    const bulks2 = sendBulks(bulk, 'r');
    await delay(SESSIONS_FROM_S * 1000);
    const sessionPhase = await load(SESSIONS_S);
    await bulks2;
    const maxPerAddress = figures().maxConcurrent;
    console.log(JSON.stringify({
      settings: { addresses: ADDRESSES, domains: DOMAINS, serverAddresses: SERVERS, rcptDelayMs: 20, maxPerHost: MAX_PER_HOST, bicRate: BIC.rate, baselineS: BIC.baselineS, duringS: DURING_S, sessionsFromS: SESSIONS_FROM_S, sessionsS: SESSIONS_S },
      seconds: Number(s.toFixed(2)),
      sessions,
      rcpts,
      data,
      maxSessionsToOneAddress: maxPerAddress, // over both rounds
      statuses,
      bic: {
        baselineP99: baseline.p99,
        duringP99: loaded.p99,
        p99Ratio: Number((loaded.p99 / baseline.p99).toFixed(3)),
        sessionPhaseP99: sessionPhase.p99,
        sessionPhaseRatio: Number((sessionPhase.p99 / baseline.p99).toFixed(3)),
        non2xx: baseline.non2xx + loaded.non2xx + sessionPhase.non2xx,
      },
      targets: { perAddress: maxPerAddress <= MAX_PER_HOST ? 'met' : 'MISSED', bicP99: loaded.p99 <= baseline.p99 * 1.2 ? 'met' : 'MISSED' },
    }, null, 2));
  } finally {
    await close();
  }
}

runBench('smtp-politeness', main);
