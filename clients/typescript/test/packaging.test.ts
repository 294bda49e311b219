// The SDK as a user gets it: built with its own tsc, packed with `npm pack`, installed offline into a new project,
// then imported by plain node (ESM) against a local HTTP server and typechecked by a consumer under the strictest flags.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYaml } from '../../../test/support/yaml.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SDK = join(ROOT, 'clients/typescript');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
/** npm must never reach a registry here: --offline, and a registry nothing listens on in case it tried anyway. */
const NPM_OFFLINE = ['--offline', '--no-audit', '--no-fund', '--loglevel=error', '--registry=http://127.0.0.1:9/'];

let dir: string;
let consumer: string;
let server: Server;
let baseUrl: string;
const seen: Array<{ url: string; key: string | undefined }> = [];

/** `npm pack` a directory into dir; returns the tarball's path and the files it holds. */
async function pack(from: string): Promise<{ tarball: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir, ...NPM_OFFLINE, from], { cwd: dir });
  const [info] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(dir, info!.filename), files: info!.files.map((f) => f.path).sort() };
}

let sdkFiles: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vls-sdk-pack-'));
  consumer = join(dir, 'consumer');
  mkdirSync(consumer);
  // The package's own build (its tsconfig.build.json), as `npm pack` would run it through prepack.
  rmSync(join(SDK, 'dist'), { recursive: true, force: true });
  await run(process.execPath, [TSC, '-p', join(SDK, 'tsconfig.build.json')], { cwd: SDK });
  const sdk = await pack(SDK);
  sdkFiles = sdk.files;
  // Its one runtime dependency (and that one's), packed from the versions package-lock.json installed here: the install
  // below then needs neither a registry nor whatever the machine's npm cache happens to hold (a fresh empty cache).
  const deps = await Promise.all(['openapi-fetch', 'openapi-typescript-helpers'].map((name) => pack(join(ROOT, 'node_modules', name))));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', ...NPM_OFFLINE, '--cache', join(dir, 'npm-cache'), sdk.tarball, ...deps.map((d) => d.tarball)], { cwd: consumer });

  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', key: req.headers['x-api-key'] as string | undefined });
    res.setHeader('content-type', 'application/json');
    if (req.url === '/api/v1/bic/DEUTDEFF') {
      res.end(JSON.stringify({ bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' }));
      return;
    }
    res.statusCode = 429;
    res.setHeader('retry-after', '7');
    res.end(JSON.stringify({ requestId: 'r-1', path: req.url, status: 429, code: 'RATE_LIMIT_EXCEEDED', message: 'slow down', error: 'slow down', details: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
  rmSync(join(SDK, 'dist'), { recursive: true, force: true });
});

describe('the packed SDK', () => {
  it('holds the built JavaScript, its declarations, README and LICENSE; no sources or tests', () => {
    expect(sdkFiles).toEqual(['LICENSE', 'README.md', 'dist/client.d.ts', 'dist/client.js', 'dist/index.d.ts', 'dist/index.js', 'dist/schema.d.ts', 'dist/schema.js', 'package.json']);
  });

  it('carries the licence and the API version of openapi.yaml', () => {
    const installed = JSON.parse(readFileSync(join(consumer, 'node_modules/@vls/client/package.json'), 'utf8'));
    const spec = parseYaml(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8'));
    expect(installed.license).toBe('Apache-2.0');
    expect(installed.version).toBe(spec.info.version);
    expect(readFileSync(join(consumer, 'node_modules/@vls/client/LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
  });

  it('is imported by plain node (ESM) and calls the API: a result, and ApiError for an error answer', async () => {
    writeFileSync(
      join(consumer, 'main.mjs'),
      `import { ApiError, ValidationClient } from '@vls/client';
const client = new ValidationClient({ baseUrl: process.argv[2], apiKey: 'sdk-key' });
const bic = await client.validateBic('DEUTDEFF');
const err = await client.validateIban('DE89370400440532013000').catch((e) => e);
console.log(JSON.stringify({ bic, isApiError: err instanceof ApiError, code: err.code, retryAfter: err.retryAfter, requestId: err.requestId }));
`,
    );
    const { stdout } = await run(process.execPath, ['main.mjs', baseUrl], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({
      bic: { bic: 'DEUTDEFFXXX', valid: true, bankCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' },
      isApiError: true,
      code: 'RATE_LIMIT_EXCEEDED',
      retryAfter: 7,
      requestId: 'r-1',
    });
    expect(seen).toEqual([
      { url: '/api/v1/bic/DEUTDEFF', key: 'sdk-key' },
      { url: '/api/v1/iban/DE89370400440532013000', key: 'sdk-key' },
    ]);
  });

  it("typechecks in a consumer's project under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess", { timeout: 120_000 }, async () => {
    writeFileSync(
      join(consumer, 'use.ts'),
      `import { ApiError, ValidationClient, type BicResult, type DnsRecordType, type IbanResult } from '@vls/client';

const client = new ValidationClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', headers: { 'User-Agent': 'consumer/1' } });
export async function use(): Promise<string> {
  const bic: BicResult = await client.validateBic('DEUTDEFF');
  const iban: IbanResult = await client.validateIban('DE89 3704 0044 0532 0130 00');
  const dns = await client.lookupDns('example.com', { types: ['MX', 'txt'] });
  const first: DnsRecordType | undefined = dns.records[0]?.type;
  // @ts-expect-error noUncheckedIndexedAccess: an array element may be undefined (proves the flag reaches these types)
  const unchecked: DnsRecordType = dns.records[0].type;
  // @ts-expect-error the methods are typed: a number is no IBAN (proves the declarations are not any)
  await client.validateIban(42);
  try {
    await client.getUsage();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'RATE_LIMIT_EXCEEDED') return String(err.retryAfter ?? 0) + (err.details[0]?.field ?? '');
  }
  return [bic.valid, iban.bic ?? '', first ?? '', unchecked].join();
}
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noImplicitOverride: true,
          noPropertyAccessFromIndexSignature: true,
          // The installed declarations (the SDK's and openapi-fetch's) are checked too; only TypeScript's own lib is not.
          skipLibCheck: false,
          skipDefaultLibCheck: true,
          noEmit: true,
        },
        files: ['use.ts'],
      }),
    );
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: consumer }).then(
      () => ({ code: 0, output: '' }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});
