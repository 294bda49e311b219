// Configuration: defaults, parsing, and a clear error naming the variable for every bad value.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseHostPorts } from '../../src/config.js';

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
    ['DNS_SERVERS', 'resolver.example'],
    ['WORKERS', 'many'],
    ['QUOTA_PER_DAY', '0'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrowError(new RegExp(`^${name}: `));
  });

  it.each([
    ['127.0.0.1', [{ host: '127.0.0.1', port: 53 }]],
    ['127.0.0.1:5353, 10.0.0.1', [{ host: '127.0.0.1', port: 5353 }, { host: '10.0.0.1', port: 53 }]],
    ['[::1]:5353', [{ host: '::1', port: 5353 }]],
    ['::1', [{ host: '::1', port: 53 }]],
  ])('parses DNS_SERVERS %s', (given, want) => {
    expect(parseHostPorts(given, 'DNS_SERVERS')).toEqual(want);
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
