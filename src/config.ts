// Configuration: every setting read once from the environment, documented (docs/configuration.md), validated and frozen.

import { HOSTING_ASNS_URL, HOSTING_SOURCES } from './domain/hosting-sources.js';
import { parseHostPortOrName } from './domain/host-port.js';
import type { HostPort } from './domain/host-port.js';
import { ConfigError } from './errors.js';

export type { HostPort } from './domain/host-port.js';

/** The largest per-key limits: for the server-wide defaults here and for a key's own (the keys CLI). */
export const MAX_LIMITS = Object.freeze({ perMinute: 1e9, perDay: 1e12, perMonth: 1e12, smtpPerDay: 1e9 });

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * REDIS_URL, or the Sentinel target of REDIS_SENTINELS and REDIS_SENTINEL_NAME written as
   * `redis-sentinel://host:port,host:port/name` (read by src/adapters/redis/redis-client.ts): either way, Redis mode.
   */
  redisUrl: string | null;
  redisSentinels: HostPort[] | null;
  redisSentinelName: string | null;
  rateLimitPerMinute: number;
  quotaPerDay: number;
  quotaPerMonth: number;
  bulkMaxItems: number;
  dnsServers: HostPort[] | null;
  dnsTimeoutMs: number;
  tlsInspectPort: number;
  tlsTimeoutMs: number;
  tlsExtraCaFile: string | null;
  allowPrivateTargets: boolean;
  pwnedPasswordsUrl: string;
  pwnedPasswordsDir: string | null;
  pwnedTimeoutMs: number;
  geoipCityDb: string | null;
  geoipAsnDb: string | null;
  binDataFile: string | null;
  hostingRangesFile: string | null;
  hostingAsnFile: string | null;
  torExitFile: string | null;
  dataRefresh: boolean;
  dataRefreshTimeoutMs: number;
  dataRefreshMaxBytes: number;
  torExitsUrl: string;
  disposableDomainsUrl: string;
  hostingAsnUrl: string;
  /** The hosting providers' list URLs by HOSTING_SOURCES id (AWS_RANGES_URL, ...); an empty list leaves one out. */
  hostingRangesUrls: Readonly<Record<string, readonly string[]>>;
  trustProxy: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  workers: number;
  passwordThreads: number;
  passwordMinThreads: number;
  passwordExtraLanguages: boolean;
  validateResponses: boolean;
  rateLimits: boolean;
  shutdownTimeoutMs: number;
  metricsPort: number | null;
  smtpCheck: boolean;
  smtpHeloName: string | null;
  smtpMailFrom: string | null;
  smtpPort: number;
  smtpTimeoutMs: number;
  smtpDeadlineMs: number;
  smtpMaxPerHost: number;
  smtpMaxSessions: number;
  smtpProxy: SocksProxy | null;
  smtpDailyPerKey: number;
  jobsMaxItems: number;
  jobsRetentionHours: number;
  jobsRetryDelaysMs: number[];
  jobsWebhookRetryDelaysMs: number[];
  jobsWorker: boolean;
  /** The nice value a job-worker process sets on its threads (0: none); servers ignore it. */
  jobsWorkerNice: number;
  jobsLeaseMs: number;
}

/** A SOCKS5 proxy the SMTP verification connects through (SMTP_PROXY). */
interface SocksProxy {
  host: string;
  port: number;
}

type Parse<T> = (raw: string, name: string) => T;

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  doc: string;
  default: Config[K];
  parse: Parse<Config[K]>;
}

const int =
  (min: number, max: number): Parse<number> =>
  (raw, name) => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
    return n;
  };

const bool: Parse<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
};

const onOff: Parse<boolean> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new ConfigError(name, `must be on or off, got "${raw}"`);
};

const text: Parse<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(name, 'must not be empty');
  return raw.trim();
};

const optionalText: Parse<string | null> = (raw) => (raw.trim() === '' ? null : raw.trim());

const url: Parse<string> = (raw, name) => {
  try {
    const u = new URL(raw.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    return u.toString().replace(/\/+$/, '');
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
};

/** http(s) URLs separated by spaces or commas, as given (a trailing slash kept); '' is none. */
const urlList: Parse<string[]> = (raw, name) =>
  raw
    .split(/[\s,]+/)
    .filter((u) => u !== '')
    .map((u) => {
      url(u, name);
      return u;
    });

const optionalPort: Parse<number | null> = (raw, name) => (raw.trim() === '' ? null : int(0, 65535)(raw, name));

const redisUrl: Parse<string | null> = (raw, name) => {
  if (raw.trim() === '') return null;
  if (!/^rediss?:\/\//.test(raw.trim())) throw new ConfigError(name, `must be a redis:// or rediss:// URL`);
  return raw.trim();
};

/** `ip`, `ip:port`, `[v6]:port`, a bare IPv6 address, `name` or `name:port`, comma-separated; default port 53. */
export const parseHostPorts: Parse<HostPort[] | null> = (raw, name) => {
  if (raw.trim() === '') return null;
  return raw.split(',').map((part) => {
    const server = parseHostPortOrName(part);
    if (!server) throw new ConfigError(name, `"${part.trim()}" is not host, host:port or [ipv6]:port (a host name or IP address, port 1-65535)`);
    return server;
  });
};

/** Sentinels as `host` or `host:port` (default 26379), comma-separated; '' is none. */
const sentinels: Parse<HostPort[] | null> = (raw, name) => {
  if (raw.trim() === '') return null;
  return raw.split(',').map((part) => {
    const server = parseHostPortOrName(part, 26379);
    if (!server) throw new ConfigError(name, `"${part.trim()}" is not host or host:port`);
    return server;
  });
};

/** `socks5://host:port` (a host name or IP address; `[v6]` for IPv6); '' is none. */
const socksProxy: Parse<SocksProxy | null> = (raw, name) => {
  const v = raw.trim();
  if (v === '') return null;
  const m = /^socks5h?:\/\/(.+)$/i.exec(v);
  const server = m ? parseHostPortOrName(m[1]) : null;
  if (!m || !server || !/:\d+$/.test(m[1])) throw new ConfigError(name, `must be socks5://host:port, got "${raw}"`);
  return { host: server.host, port: server.port };
};

/** A host name of at least two labels, as EHLO announces it (RFC 5321 §4.1.1.1: the client's fully-qualified domain name). */
const heloName: Parse<string | null> = (raw, name) => {
  const v = raw.trim().toLowerCase().replace(/\.$/, '');
  if (v === '') return null;
  const labels = v.split('.');
  if (v.length > 253 || labels.length < 2 || !labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) {
    throw new ConfigError(name, `must be a fully-qualified host name (the verifier's own, with forward and reverse DNS), got "${raw}"`);
  }
  return v;
};

/** The envelope sender of verification sessions: a plain ASCII address (RFC 5321 §4.1.2 Mailbox, no quoting). */
const mailFrom: Parse<string | null> = (raw, name) => {
  const v = raw.trim();
  if (v === '') return null;
  if (!/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/.test(v) || v.length > 254) {
    throw new ConfigError(name, `must be a plain address such as verify@example.com, got "${raw}"`);
  }
  return v;
};

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** JOBS_RETRY_DELAYS (5m, 20m, 60m) and JOBS_WEBHOOK_RETRY_DELAYS (5s, 5m, 30m, 2h, 5h, 10h), in ms: one array each. */
const RETRY_DELAYS_MS = Object.freeze([300_000, 1_200_000, 3_600_000]) as number[];
const WEBHOOK_RETRY_DELAYS_MS = Object.freeze([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]) as number[];

/** Durations such as `5m,20m,60m` (units ms, s, m, h; a bare number is ms; at most 7 days each); '' is none. */
const durations: Parse<number[]> = (raw, name) => {
  if (raw.trim() === '') return [];
  return raw.split(',').map((part) => {
    const m = /^(\d+)(ms|s|m|h)?$/.exec(part.trim());
    const ms = m ? Number(m[1]) * UNIT_MS[m[2] ?? 'ms'] : NaN;
    if (!(ms > 0 && ms <= 7 * 24 * UNIT_MS.h)) throw new ConfigError(name, `"${part.trim()}" is not a duration such as 30s, 5m or 1h (at most 7 days)`);
    return ms;
  });
};

const level: Parse<Config['logLevel']> = (raw, name) => {
  const v = raw.trim().toLowerCase();
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  if (!(levels as readonly string[]).includes(v)) throw new ConfigError(name, `must be one of ${levels.join(', ')}`);
  return v as Config['logLevel'];
};

const workers =
  (cpus: number): Parse<number> =>
  (raw, name) =>
    raw.trim().toLowerCase() === 'auto' ? cpus : int(1, 256)(raw, name);

function settings(cpus: number): Setting<keyof Config>[] {
  const s = <K extends keyof Config>(key: K, env: string, def: Config[K], parse: Parse<Config[K]>, doc: string) =>
    ({ key, env, default: def, parse, doc }) as unknown as Setting<keyof Config>;
  return [
    s('port', 'PORT', 8080, int(0, 65535), 'HTTP port'),
    s('host', 'HOST', '0.0.0.0', text, 'listen address'),
    s('dataDir', 'DATA_DIR', './var', text, 'where the embedded SQLite store keeps keys and usage counters'),
    s('redisUrl', 'REDIS_URL', null, redisUrl, 'when set, keys, all counters, jobs and the SMTP per-address limits and verdicts live in Redis, shared by every instance'),
    s('redisSentinels', 'REDIS_SENTINELS', null, sentinels, 'host:port,... of Redis Sentinels: instead of REDIS_URL, the primary they name (REDIS_SENTINEL_NAME) holds keys, counters and jobs, and a failover is followed'),
    s('redisSentinelName', 'REDIS_SENTINEL_NAME', null, optionalText, 'the primary\'s name the Sentinels monitor (with REDIS_SENTINELS)'),
    s('rateLimitPerMinute', 'RATE_LIMIT_PER_MINUTE', 60, int(1, MAX_LIMITS.perMinute), 'per-key per-minute limit default'),
    s('quotaPerDay', 'QUOTA_PER_DAY', 5000, int(1, MAX_LIMITS.perDay), 'per-key daily quota default (UTC day)'),
    s('quotaPerMonth', 'QUOTA_PER_MONTH', 100000, int(1, MAX_LIMITS.perMonth), 'per-key monthly quota default (UTC month)'),
    s('bulkMaxItems', 'BULK_MAX_ITEMS', 1000, int(1, 1000), 'most items in one bulk request, 1-1000 (POST /api/v1/iban/bulk, bic/bulk, email/bulk); each counts as one request'),
    s('dnsServers', 'DNS_SERVERS', null, parseHostPorts, 'comma-separated host[:port] / [ipv6]:port list (names looked up once at boot); default: the system resolvers'),
    s('dnsTimeoutMs', 'DNS_TIMEOUT_MS', 3000, int(1, 60000), 'per-query DNS timeout'),
    s('tlsInspectPort', 'TLS_INSPECT_PORT', 443, int(1, 65535), 'port certificate inspection connects to'),
    s('tlsTimeoutMs', 'TLS_TIMEOUT_MS', 5000, int(1, 60000), 'TLS connect + handshake timeout'),
    s('tlsExtraCaFile', 'TLS_EXTRA_CA_FILE', null, optionalText, 'PEM file of extra trusted roots for inspection'),
    s('allowPrivateTargets', 'ALLOW_PRIVATE_TARGETS', false, bool, 'tests only: lift the outbound target guard (TLS inspection, MTA-STS fetches and SMTP verification may reach private and special addresses) and let the DNS and email operations look up private names'),
    s('pwnedPasswordsUrl', 'PWNED_PASSWORDS_URL', 'https://api.pwnedpasswords.com', url, 'base of the k-anonymity range API'),
    s('pwnedPasswordsDir', 'PWNED_PASSWORDS_DIR', null, optionalText, 'local mirror of range files; no prefix leaves the machine'),
    s('pwnedTimeoutMs', 'PWNED_TIMEOUT_MS', 2000, int(1, 60000), 'range request timeout'),
    s('geoipCityDb', 'GEOIP_CITY_DB', null, optionalText, 'MaxMind City database; default: the bundled GeoLite2 City under DATA_DIR/geoip'),
    s('geoipAsnDb', 'GEOIP_ASN_DB', null, optionalText, 'MaxMind ASN database; default: the bundled GeoLite2 ASN under DATA_DIR/geoip'),
    s('binDataFile', 'BIN_DATA_FILE', null, optionalText, 'BIN ranges CSV (binlist column layout); default: the bundled data/bin/ranges.csv'),
    s('hostingRangesFile', 'HOSTING_RANGES_FILE', null, optionalText, 'hosting-provider ranges, lines "cidr,provider"; default: the bundled data/ip/hosting-ranges.csv'),
    s('hostingAsnFile', 'HOSTING_ASN_FILE', null, optionalText, 'hosting, data-centre and cloud networks, lines "AS<number> # name"; default: the bundled data/ip/hosting-asns.txt'),
    s('torExitFile', 'TOR_EXIT_FILE', null, optionalText, 'Tor exit addresses, one per line (or the exit list format); default: the bundled data/ip/tor-exits.txt'),
    s('dataRefresh', 'DATA_REFRESH', false, onOff, 'on: download the Tor exit list hourly, the hosting ranges, the hosting ASN list and the disposable domains daily from the *_URL settings into DATA_DIR/lists and swap them in (docs/data-sources.md)'),
    s('dataRefreshTimeoutMs', 'DATA_REFRESH_TIMEOUT_MS', 60000, int(1000, 600000), 'budget for one list download, redirects included (DATA_REFRESH)'),
    s('dataRefreshMaxBytes', 'DATA_REFRESH_MAX_BYTES', 67108864, int(1024, 1073741824), 'largest list download accepted, in bytes (DATA_REFRESH)'),
    s('torExitsUrl', 'TOR_EXITS_URL', 'https://check.torproject.org/torbulkexitlist', url, 'the Tor exit list DATA_REFRESH downloads hourly (one address per line)'),
    s('disposableDomainsUrl', 'DISPOSABLE_DOMAINS_URL', 'https://raw.githubusercontent.com/disposable-email-domains/disposable-email-domains/main/disposable_email_blocklist.conf', url, 'the disposable-domain blocklist DATA_REFRESH downloads daily (one domain per line, or a JSON array)'),
    s('hostingAsnUrl', 'HOSTING_ASN_URL', HOSTING_ASNS_URL, url, 'the hosting ASN list DATA_REFRESH downloads daily (lines "AS<number> # name"; the access networks of ADR 0026 are left out)'),
    // The default is the source's own (frozen) list: one value whatever the CPU count.
    ...HOSTING_SOURCES.map((h) => s('hostingRangesUrls', h.env, h.urls as never, urlList as never, `${h.provider}'s published ranges, downloaded daily by DATA_REFRESH (URLs separated by commas or spaces; empty: left out of the refreshed list)`)),
    s('trustProxy', 'TRUST_PROXY', false, bool, 'take the client address of GET /api/v1/ip from X-Forwarded-For'),
    s('logLevel', 'LOG_LEVEL', 'info', level, 'pino level'),
    s('workers', 'WORKERS', 1, workers(cpus), 'processes serving the port (auto = number of CPUs)'),
    // Each thread costs memory (the word lists are shared; figures: BENCHMARKS.md), so the default does not grow with the machine.
    s('passwordThreads', 'PASSWORD_THREADS', Math.max(1, Math.min(2, cpus - 1)), workers(cpus), 'zxcvbn worker threads per process, reading one shared copy of the word lists (memory: BENCHMARKS.md): one core is left to the event loop, at most 2 (auto = number of CPUs)'),
    s('passwordMinThreads', 'PASSWORD_MIN_THREADS', 0, int(0, 256), 'zxcvbn threads kept warm; above it threads start on demand and leave after 10 idle minutes'),
    s('passwordExtraLanguages', 'PASSWORD_EXTRA_LANGUAGES', false, bool, 'also match German, French and Spanish word lists (doubles the zxcvbn cost per call)'),
    s('rateLimits', 'RATE_LIMITS', true, onOff, 'off disables rate limits and quotas (trusted deployments, benchmarks)'),
    s('validateResponses', 'VALIDATE_RESPONSES', false, bool, 'validate every response against openapi.yaml (slow; for debugging)'),
    s('shutdownTimeoutMs', 'SHUTDOWN_TIMEOUT_MS', 10000, int(0, 600000), 'how long in-flight requests may finish after SIGTERM'),
    s('metricsPort', 'METRICS_PORT', null, optionalPort, 'when set, GET /metrics is served on this port only (same HOST), not on PORT'),
    s('smtpCheck', 'SMTP_CHECK', false, onOff, 'on lets email requests ask for SMTP mailbox verification (smtp=true); needs outbound port 25, SMTP_HELO_NAME and SMTP_MAIL_FROM'),
    s('smtpHeloName', 'SMTP_HELO_NAME', null, heloName, 'the host name sent in EHLO/HELO (required when SMTP_CHECK=on; forward and reverse DNS should match it)'),
    s('smtpMailFrom', 'SMTP_MAIL_FROM', null, mailFrom, 'the MAIL FROM address of verification sessions (required when SMTP_CHECK=on)'),
    s('smtpPort', 'SMTP_PORT', 25, int(1, 65535), 'port of the MX hosts'),
    s('smtpTimeoutMs', 'SMTP_TIMEOUT_MS', 10000, int(1, 120000), 'limit of one session with one MX server address (connect to QUIT); past it the next address or MX host is tried'),
    s('smtpDeadlineMs', 'SMTP_DEADLINE_MS', 30000, int(1, 600000), 'limit of the whole verification of an address (its MX and address lookups, every MX host and address, slot waits, the plain retry after a failed STARTTLS); past it unknown/timeout'),
    s('smtpMaxPerHost', 'SMTP_MAX_PER_HOST', 2, int(1, 100), 'simultaneous SMTP sessions to one server address (the IP dialled, whatever MX names point at it), single requests, bulk and job items together; with Redis, every process together'),
    s('smtpMaxSessions', 'SMTP_MAX_SESSIONS', 50, int(1, 10000), 'simultaneous SMTP sessions of the whole process'),
    s('smtpProxy', 'SMTP_PROXY', null, socksProxy, 'socks5://host:port: reach MX hosts through this SOCKS5 proxy; default: direct connections'),
    s('smtpDailyPerKey', 'SMTP_DAILY_PER_KEY', 1000, int(0, MAX_LIMITS.smtpPerDay), 'per-key daily SMTP verification quota default (UTC day; 0: no SMTP verification at all); keys CLI --smtp-per-day sets a key\'s own'),
    s('jobsMaxItems', 'JOBS_MAX_ITEMS', 100000, int(1, 1000000), 'most addresses in one email verification job (POST /api/v1/email/jobs); the body limit follows'),
    s('jobsRetentionHours', 'JOBS_RETENTION_HOURS', 72, int(1, 8760), 'hours a job and its results are kept after creation, then deleted (404)'),
    s('jobsRetryDelaysMs', 'JOBS_RETRY_DELAYS', RETRY_DELAYS_MS, durations, 'when a greylisted, timed-out or unreachable address is asked again, after each attempt: 5m,20m,60m (units ms, s, m, h; a bare number is ms)'),
    s('jobsWebhookRetryDelaysMs', 'JOBS_WEBHOOK_RETRY_DELAYS', WEBHOOK_RETRY_DELAYS_MS, durations, 'when a failed job webhook is sent again, after each attempt: 5s,5m,30m,2h,5h,10h'),
    s('jobsLeaseMs', 'JOBS_LEASE_MS', 30000, int(100, 600000), 'how long items a worker took stay its own without renewal (renewed every third of it); a crashed worker\'s items are taken over after it'),
    s('jobsWorker', 'JOBS_WORKER', true, onOff, 'off: this process serves the jobs API but works on no job (npm run job-worker does)'),
    s('jobsWorkerNice', 'JOBS_WORKER_NICE', 10, int(0, 19), 'nice value of every thread of an npm run job-worker process (Linux; 0: as started): on a host it shares with servers, its batch work yields the CPU to their requests'),
  ];
}

/** The settings with their docs: docs/configuration.md's reference is generated from them (scripts/config-docs.ts); the bench clears them from its services' env. */
export function describeSettings(cpus = 1): Array<{ env: string; default: unknown; doc: string }> {
  return settings(cpus).map((s) => ({ env: s.env, default: s.default, doc: s.doc }));
}

/** Read and validate the environment; throws ConfigError naming the variable on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cpus = 1): Readonly<Config> {
  const out: Partial<Record<keyof Config, unknown>> = {};
  const hostingUrls: Record<string, readonly string[]> = {};
  for (const s of settings(cpus)) {
    const raw = env[s.env];
    const value = raw === undefined ? s.default : s.parse(raw, s.env);
    // One setting per provider, gathered into one map (their order is HOSTING_SOURCES').
    if (s.key === 'hostingRangesUrls') hostingUrls[HOSTING_SOURCES.find((h) => h.env === s.env)!.id] = value as unknown as readonly string[];
    else out[s.key] = value;
  }
  out.hostingRangesUrls = hostingUrls;
  const config = out as Config;
  if (config.metricsPort !== null && config.metricsPort !== 0 && config.metricsPort === config.port) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${config.port}): /metrics is served on its own port`);
  }
  if (config.redisSentinels !== null || config.redisSentinelName !== null) {
    if (config.redisUrl !== null) throw new ConfigError('REDIS_SENTINELS', 'and REDIS_URL are alternatives: set one of them');
    if (config.redisSentinels === null) throw new ConfigError('REDIS_SENTINELS', 'is required with REDIS_SENTINEL_NAME');
    if (config.redisSentinelName === null) throw new ConfigError('REDIS_SENTINEL_NAME', 'is required with REDIS_SENTINELS');
    const hosts = config.redisSentinels.map((h) => (h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`));
    config.redisUrl = `redis-sentinel://${hosts.join(',')}/${encodeURIComponent(config.redisSentinelName)}`;
  }
  // A verification without a sender or a name to announce would be refused by every server: say so at boot.
  if (config.smtpCheck) {
    if (config.smtpHeloName === null) throw new ConfigError('SMTP_HELO_NAME', 'is required when SMTP_CHECK=on (the verifier\'s host name, with forward and reverse DNS)');
    if (config.smtpMailFrom === null) throw new ConfigError('SMTP_MAIL_FROM', 'is required when SMTP_CHECK=on (the envelope sender of verification sessions)');
  }
  return Object.freeze(config);
}
