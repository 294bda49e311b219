// The /docs page is read at its first request, not at start (ADR 0039: ~3 MB RSS in every process that never serves it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { docsPageOnDemand } from '../../src/capabilities/shared/docs.js';
import { waitFor } from '../support/wait.js';

let dir: string;
let warnings: string[];
const logger = { warn: (...args: unknown[]) => void warnings.push(String(args.at(-1))) };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vls-docs-lazy-'));
  warnings = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('docsPageOnDemand', () => {
  it('reads nothing until the first call: a page written after start is the one served', async () => {
    const path = join(dir, 'index.html');
    const docsPage = docsPageOnDemand(logger, path);
    writeFileSync(path, '<!DOCTYPE html><title>API</title>');
    const page = await docsPage();
    expect(page?.identity.toString()).toBe('<!DOCTYPE html><title>API</title>');
    // Its encodings follow the read; later calls get them.
    await waitFor(async () => (await docsPage())?.br ?? null, { what: 'the br encoding' });
    expect(warnings).toEqual([]);
  });

  it('shares one read among concurrent first calls', async () => {
    const path = join(dir, 'index.html');
    writeFileSync(path, 'page');
    const docsPage = docsPageOnDemand(logger, path);
    const [a, b] = await Promise.all([docsPage(), docsPage()]);
    expect(a).not.toBeNull();
    expect(b).toBe(a);
  });

  it('answers null when the page is not built, warns once, and does not read again', async () => {
    const path = join(dir, 'index.html');
    const docsPage = docsPageOnDemand(logger, path);
    expect(await docsPage()).toBeNull();
    writeFileSync(path, 'built later');
    expect(await docsPage()).toBeNull();
    expect(warnings).toEqual(['documentation page not built (make docs): /docs answers 503']);
  });
});
