// Configuration: defaults, parsing, and a clear error naming the variable for every bad value.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeSettings, loadConfig, parseHostPorts } from '../../src/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: './var',
      redisUrl: null,
      rateLimitPerMinute: 60,
      quotaPerDay: 5000,
      quotaPerMonth: 100000,
      dnsServers: null,
      dnsTimeoutMs: 3000,
      tlsInspectPort: 443,
      tlsTimeoutMs: 5000,
      allowPrivateTargets: false,
      pwnedPasswordsUrl: 'https://api.pwnedpasswords.com',
      pwnedTimeoutMs: 2000,
      trustProxy: false,
      logLevel: 'info',
      workers: 1,
    });
  });

  it('is frozen', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DNS_TIMEOUT_MS', '-5'],
    ['ALLOW_PRIVATE_TARGETS', 'yes please'],
    ['TRUST_PROXY', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['PWNED_PASSWORDS_URL', 'ftp://x'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['DNS_SERVERS', '1.1.1.1:99999'],
    ['DNS_SERVERS', '127.0.0.1:abc'],
    ['DNS_SERVERS', '1.2.3.999'],
    ['DNS_SERVERS', 'bad_name:53'],
    ['DNS_SERVERS', 'a..b'],
    ['DNS_SERVERS', 'resolver.example:0'],
    ['WORKERS', 'many'],
    ['QUOTA_PER_DAY', '0'],
    ['METRICS_PORT', 'nine-one-hundred'],
    ['METRICS_PORT', '70000'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrowError(new RegExp(`^${name}: `));
  });

  it.each([
    ['127.0.0.1', [{ host: '127.0.0.1', port: 53 }]],
    ['127.0.0.1:5353, 10.0.0.1', [{ host: '127.0.0.1', port: 5353 }, { host: '10.0.0.1', port: 53 }]],
    ['[::1]:5353', [{ host: '::1', port: 5353 }]],
    ['::1', [{ host: '::1', port: 53 }]],
    ['LocalHost:5353', [{ host: 'localhost', port: 5353 }]],
    ['resolver.example., 10.0.0.1', [{ host: 'resolver.example', port: 53 }, { host: '10.0.0.1', port: 53 }]],
  ])('parses DNS_SERVERS %s', (given, want) => {
    expect(parseHostPorts(given, 'DNS_SERVERS')).toEqual(want);
  });

  it('leaves METRICS_PORT unset by default, and reads it when given', () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9100' }).metricsPort).toBe(9100);
  });

  it('refuses a METRICS_PORT equal to PORT', () => {
    expect(() => loadConfig({ PORT: '9100', METRICS_PORT: '9100' })).toThrowError(/^METRICS_PORT: must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '8080' })).toThrowError(/^METRICS_PORT: /);
  });

  it('takes WORKERS=auto as the CPU count', () => {
    expect(loadConfig({ WORKERS: 'auto' }, 6).workers).toBe(6);
  });

  it('makes the server exit 1 with a message naming the variable', { timeout: 60_000 }, () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'not-a-port' },
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/PORT: must be a whole number/);
  });
});

describe('documentation of the settings', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  /** README's configuration table: variable -> default cell. */
  const rows = new Map([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2].trim()]));
  const settings = describeSettings();

  it('lists exactly the variables the server reads', () => {
    expect([...rows.keys()].sort()).toEqual(settings.map((s) => s.env).sort());
  });

  // PASSWORD_THREADS depends on the CPU count: checked on its own below.
  const fixed = settings.filter((s) => (typeof s.default === 'number' || typeof s.default === 'string') && s.env !== 'PASSWORD_THREADS');
  it.each(fixed)(
    'gives $env the default the code has',
    ({ env, default: value }) => {
      expect(rows.get(env)).toBe(`\`${value}\``);
    },
  );

  it('gives PASSWORD_THREADS the defaults the code has on one and on two CPUs', () => {
    const threads = (cpus: number) => describeSettings(cpus).find((s) => s.env === 'PASSWORD_THREADS')!.default;
    expect(rows.get('PASSWORD_THREADS')).toBe(`${threads(2)} (${threads(1)} on one CPU)`);
  });

  it('reads every variable OPERATIONS.md names', () => {
    const operations = readFileSync(new URL('../../../shared/OPERATIONS.md', import.meta.url), 'utf8');
    const named = new Set([...operations.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+|PORT|HOST)`/g)].map((m) => m[1]));
    const read = new Set(settings.map((s) => s.env));
    expect([...named].filter((env) => !read.has(env))).toEqual([]);
  });
});
