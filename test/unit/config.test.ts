// Configuration: defaults, parsing, and a clear error naming the variable for every bad value.
// @module-tag slow (left out of make test-fast): starts a server process
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { describeSettings, loadConfig, parseHostPorts } from '../../src/config.js';
import { CONFIG_PAGE, renderConfigReference, withReference } from '../../scripts/config-docs.js';
import { runServerProcess } from '../support/server-process.js';

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
    ['SMTP_CHECK', 'maybe'],
    ['SMTP_PORT', '0'],
    ['SMTP_TIMEOUT_MS', 'soon'],
    ['SMTP_MAX_PER_HOST', '0'],
    ['SMTP_PROXY', 'http://proxy.example:1080'],
    ['SMTP_PROXY', 'socks5://proxy.example'],
    ['SMTP_HELO_NAME', 'localhost'],
    ['SMTP_HELO_NAME', 'bad_name.example.com'],
    ['SMTP_MAIL_FROM', 'not an address'],
    ['SMTP_MAIL_FROM', 'a@b'],
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

  it('makes the server exit 1 with a message naming the variable', { timeout: 180_000 }, async () => {
    const run = await runServerProcess({ env: { PORT: 'not-a-port' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/PORT: must be a whole number/);
  });
});

describe('SMTP verification settings', () => {
  const on = { SMTP_CHECK: 'on', SMTP_HELO_NAME: 'verify.example.com', SMTP_MAIL_FROM: 'check@example.com' };

  it('are off by default, with the documented port, timeout and per-host limit', () => {
    expect(loadConfig({})).toMatchObject({ smtpCheck: false, smtpHeloName: null, smtpMailFrom: null, smtpPort: 25, smtpTimeoutMs: 10000, smtpMaxPerHost: 2, smtpProxy: null });
  });

  it('read a SOCKS5 proxy as host and port', () => {
    expect(loadConfig({ ...on, SMTP_PROXY: 'socks5://127.0.0.1:1080' }).smtpProxy).toEqual({ host: '127.0.0.1', port: 1080 });
    expect(loadConfig({ ...on, SMTP_PROXY: 'socks5://proxy.example.net:9050' }).smtpProxy).toEqual({ host: 'proxy.example.net', port: 9050 });
  });

  it.each(['SMTP_HELO_NAME', 'SMTP_MAIL_FROM'])('stop the boot naming %s when SMTP_CHECK=on lacks it', (missing) => {
    const env: Record<string, string> = { ...on };
    delete env[missing];
    expect(() => loadConfig(env)).toThrowError(new RegExp(`^${missing}: is required when SMTP_CHECK=on`));
  });

  it('take SMTP_CHECK=on with both', () => {
    expect(loadConfig(on)).toMatchObject({ smtpCheck: true, smtpHeloName: 'verify.example.com', smtpMailFrom: 'check@example.com' });
  });
});

describe('documentation of the settings (docs/configuration.md)', () => {
  const guide = readFileSync(CONFIG_PAGE, 'utf8');
  /** The generated reference table: variable -> default cell. */
  const rows = new Map([...guide.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2].trim()]));
  const settings = describeSettings();

  it('holds the reference generated from src/config.ts', () => {
    const fresh = withReference(guide, renderConfigReference());
    expect(guide === fresh, 'docs/configuration.md differs from src/config.ts: run `make docs-config` and commit the page').toBe(true);
  });

  it('explains in its details only variables the code reads', () => {
    const read = new Set(settings.map((s) => s.env));
    const explained = [...guide.matchAll(/^- `([A-Z][A-Z0-9_]+)`:/gm)].map((m) => m[1]);
    expect(explained.length).toBeGreaterThan(0);
    expect(explained.filter((env) => !read.has(env))).toEqual([]);
  });

  it('has a configuration table', () => {
    expect(rows.size).toBeGreaterThan(0);
  });

  it('documents every variable the code reads', () => {
    const documented = new Set(rows.keys());
    expect(settings.map((s) => s.env).filter((env) => !documented.has(env))).toEqual([]);
  });

  it('documents no variable the code does not read', () => {
    const read = new Set(settings.map((s) => s.env));
    expect([...rows.keys()].filter((env) => !read.has(env))).toEqual([]);
  });

  // PASSWORD_THREADS depends on the CPU count: checked on its own below.
  const checked = settings.filter((s) => s.env !== 'PASSWORD_THREADS');

  it.each(checked.filter((s) => s.default !== null))('gives $env the default the code has', ({ env }) => {
    const cell = rows.get(env);
    expect(cell, `${env}: the default is a value in backticks`).toMatch(/^`[^`]+`$/);
    // The documented value, read as the server would read it, is what the server uses when the variable is unset.
    expect(loadConfig({ [env]: cell!.slice(1, -1) })).toEqual(loadConfig({}));
  });

  it.each(checked.filter((s) => s.default === null))('gives $env, unset by default, the default the code names', ({ env, doc }) => {
    const cell = rows.get(env)!.replace(/`/g, '');
    // "unset", or what the code's own description names as the default ("default: the system resolvers").
    const named = /default: (?:the )?(.*)$/.exec(doc)?.[1] ?? '';
    expect(cell === 'unset' || (cell !== '' && named.includes(cell)), `${env}: "${cell}" against "${doc}"`).toBe(true);
  });

  it('gives PASSWORD_THREADS the defaults the code has on one to four CPUs: a core left to the event loop', () => {
    const threads = (cpus: number) => describeSettings(cpus).find((s) => s.env === 'PASSWORD_THREADS')!.default;
    expect([threads(1), threads(2), threads(3), threads(4)]).toEqual([1, 1, 2, 2]);
    expect(rows.get('PASSWORD_THREADS')).toBe(`${threads(2)} (${threads(3)} from three CPUs)`);
  });

  it('is the only place the code reads the environment from (src/config.ts through loadConfig)', () => {
    const root = new URL('../../src/', import.meta.url);
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const direct = files.flatMap((f) =>
      [...readFileSync(new URL(f, root), 'utf8').matchAll(/process\.env\s*(?:\.|\[|\?\.)/g)].map(() => `src/${f}`),
    );
    expect(direct).toEqual([]);
  });
});
