// The /docs Redoc page in a real browser (Debian chromium via playwright-core): intro, every operation with its samples, no outside requests.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';
import { parseYaml } from '../support/yaml.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const DOCS_HTML = join(ROOT, 'dist/docs/index.html');
const ARTIFACTS = join(ROOT, 'test/artifacts');
/** Playwright's wait for an element: a deadline for a starved machine (the global test timeout is 60 s). */
const WAIT_MS = 30_000;

interface CodeSample {
  lang: string;
  label: string;
  source: string;
}
interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  tag: string;
  samples: CodeSample[];
  /** A distinctive value of the first example of the 200 response: Redoc shows that example's JSON. */
  responseExample: string | null;
}

const spec = parseYaml(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8'));
const ERROR_CODES: string[] = spec.components.schemas.ErrorCode.enum;

function deref(node: any): any {
  if (node && typeof node.$ref === 'string') {
    return node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((acc: any, key: string) => acc[key], spec);
  }
  return node;
}

/** The shallowest string of 3+ characters in an example, breadth-first (a bulk answer nests its results). */
function firstString(value: unknown): string | undefined {
  let level: unknown[] = [value];
  while (level.length > 0) {
    const next: unknown[] = [];
    for (const v of level) {
      if (typeof v === 'string' && v.length >= 3) return v;
      if (v && typeof v === 'object') next.push(...Object.values(v));
    }
    level = next;
  }
  return undefined;
}

const operations: DocumentedOperation[] = Object.entries(spec.paths as Record<string, any>).flatMap(([path, item]) =>
  Object.entries(item as Record<string, any>)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, op]) => {
      const examples = deref(op.responses['200'])?.content?.['application/json']?.examples ?? {};
      const first = Object.values(examples)[0] as { value?: Record<string, unknown> } | undefined;
      const text = firstString(first?.value);
      return {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary,
        tag: op.tags[0],
        samples: op['x-codeSamples'] ?? [],
        responseExample: text ?? null,
      };
    }),
);

const haveChromium = existsSync(CHROMIUM);
const mustRun = Boolean(process.env.CI);

/** Build the page like `make docs` when it is missing or older than its sources. */
function ensureDocsBuilt(): void {
  const sources = ['openapi.yaml', 'redocly.yaml'].map((f) => statSync(join(ROOT, f)).mtimeMs);
  if (existsSync(DOCS_HTML) && statSync(DOCS_HTML).mtimeMs >= Math.max(...sources)) return;
  mkdirSync(join(ROOT, 'dist/docs'), { recursive: true });
  const run = spawnSync('npx', ['--no-install', 'redocly', 'build-docs', 'openapi.yaml', '--inlineBundle', '-o', DOCS_HTML], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', NPM_CONFIG_UPDATE_NOTIFIER: 'false' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`redocly build-docs failed:\n${run.stdout}\n${run.stderr}`);
}

/** The server reads the page at start-up in the background: wait (bounded) until /docs answers 200. */
async function docsServed(base: string): Promise<void> {
  await waitFor(async () => (await fetch(`${base}/docs`)).status === 200, { intervalMs: 25, what: '/docs answering 200' });
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A sidebar entry of an operation: its summary then its method (lower-case in the DOM, upper-cased by CSS). */
const entryText = (op: DocumentedOperation) => new RegExp(`^${escapeRe(op.summary)}\\s*${op.method}$`, 'i');
const MENU_ITEM = '[data-component-name="Menu/MenuItem"]';
/** A sidebar entry of an operation (a nested menu item: the groups' own text holds their entries'). */
const entry = (page: Page, op: DocumentedOperation) => page.locator(MENU_ITEM).filter({ hasText: entryText(op) }).first();
/** A tag's group in the sidebar: the menu item whose own label is the tag. */
const group = (page: Page, tag: string) => page.locator(`${MENU_ITEM}.menu-item-type-group`).filter({ has: page.locator(`:scope > a [data-text="${tag}"]`) }).first();
/** Closed: the group holds no entries at all (Redoc renders a group's entries only while it is open). */
const groupClosed = async (page: Page, tag: string) => (await group(page, tag).locator(':scope > div > *').count()) === 0;

/**
 * Shows a tag's entries in the sidebar, all visible at once. Redoc opens the group of the section in view and closes
 * it when its scroll-spy moves on, and it renders its content lazily (only the sections near the view, their heights
 * measured as they render): the jump a click on a tag makes can settle on a neighbouring section, and on a loaded
 * machine that comes after the group opened, which closed it again for good (the flake of "lists every operation of
 * tag Account": one click, then a 30 s wait). So the state is looked at and the click repeated until it holds: a
 * second click finds the page at the tag already, nothing scrolls and nothing closes the group. An open group is never
 * clicked (a click closes it).
 */
async function showTag(page: Page, tag: string): Promise<void> {
  const entries = operations.filter((o) => o.tag === tag).map((op) => entry(page, op));
  await waitFor(
    async () => {
      if ((await Promise.all(entries.map((e) => e.isVisible()))).every(Boolean)) return true;
      if (await groupClosed(page, tag)) await group(page, tag).locator(':scope > a').click();
      return false;
    },
    { intervalMs: 100, timeoutMs: WAIT_MS, what: `every entry of tag ${tag} visible in the sidebar` },
  );
}

/** Opens an operation from the sidebar; a click that finds its group closed again (see showTag) is tried anew. */
async function openOperation(page: Page, op: DocumentedOperation): Promise<void> {
  await waitFor(
    async () => {
      await showTag(page, op.tag);
      await entry(page, op).click({ timeout: 2_000 });
      return true;
    },
    { intervalMs: 100, timeoutMs: WAIT_MS, what: `${op.operationId} opened from the sidebar` },
  );
}
/** A heading by its text (its accessible name also holds the anchor link's label). */
const heading = (page: Page, text: string) => page.locator('h1, h2, h3').filter({ hasText: new RegExp(`^${escapeRe(text)}$`) });
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe.runIf(haveChromium || mustRun)('/docs in chromium', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  /** Requests that tried to leave the machine (aborted before reaching the network). */
  const outside: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium (apt-get install -y chromium)`);
    ensureDocsBuilt();
    // TCP: the client is Chromium, another process.
    h = await startHarness({}, { tcp: true });
    await docsServed(h.url);
    userDataDir = mkdtempSync(join(tmpdir(), 'vls-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
        '--no-first-run',
      ],
    });
    context.setDefaultTimeout(WAIT_MS);
    // Every request the page makes goes through here: loopback passes, anything else is recorded and never sent.
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      outside.push(url.href);
      return route.abort('blockedbyclient');
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => pageErrors.push(err.message));
    // DOCS_CPU_THROTTLE=8: Chromium's CPU emulated that many times slower, a loaded machine on demand (the flake above).
    const throttle = Number(process.env.DOCS_CPU_THROTTLE ?? 1);
    if (throttle > 1) await (await context.newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: throttle });
    await page.goto(`${h.url}/docs`, { waitUntil: 'load' });
    // The page comes server-rendered: until React has hydrated it (the 2.6 MB bundle, slow on a loaded machine), the
    // sidebar's entries are plain links and a click would leave the page. React marks each node it hydrated.
    await page.waitForFunction((sel) => {
      const link = document.querySelector(`${sel} a`);
      return link !== null && Object.keys(link).some((k) => k.startsWith('__reactFiber$'));
    }, MENU_ITEM);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await context?.close();
    await h?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it('is served self-contained: the Redoc bundle inlined, not loaded from a CDN', async () => {
    const html = await (await fetch(`${h.url}/docs`)).text();
    expect(html, 'build the page with `redocly build-docs --inlineBundle`').not.toMatch(/<script[^>]+src="https?:/);
    expect(html).not.toMatch(/import [^;]*from\s*"https?:/);
  });

  it('opens with the API title and the intro sections', async () => {
    await page.locator('h1').filter({ hasText: new RegExp(`^${escapeRe(spec.info.title)}`) }).first().waitFor();
    for (const section of ['Authentication', 'Limits and headers', 'Errors', 'Privacy']) {
      await heading(page, section).first().waitFor();
    }
    await page.screenshot({ path: join(ARTIFACTS, 'docs-intro.png') });
  });

  it('explains authentication, limits, headers and privacy in the intro', async () => {
    const text = squash(await page.locator('#redoc').innerText());
    for (const phrase of ['X-Api-Key', 'Retry-After', 'X-Request-Id', 'RateLimit-Remaining', 'k-anonymity', 'last four digits']) {
      expect(text, phrase).toContain(phrase);
    }
  });

  it('lists every error code of the error model in the intro', async () => {
    const text = await page.locator('#redoc').innerText();
    const missing = ERROR_CODES.filter((code) => !text.includes(code));
    expect(missing).toEqual([]);
  });

  it.each([...new Set(operations.map((o) => o.tag))])('lists every operation of tag %s in the sidebar', async (tag) => {
    await showTag(page, tag);
  });

  // The System tag's routes (/healthz, /metrics...) are listed above but have no SDK method and no JSON example to show.
  it.each(operations.filter((o) => o.tag !== 'System').map((o) => [o.operationId, o] as const))('shows %s with its curl and SDK samples and its response example', async (_id, op) => {
    expect(op.samples.map((s) => s.label)).toEqual(['curl', 'TypeScript SDK']);
    await openOperation(page, op);
    await heading(page, op.summary).first().waitFor();

    // The request panel is the one headed by this operation's exact path.
    const panel = page
      .locator('[data-component-name="Panel/Panel"]')
      .filter({ has: page.locator('[data-component-name="Panel/PanelHeader"] span', { hasText: new RegExp(`^${escapeRe(op.path)}$`) }) })
      .first();
    await panel.waitFor();
    const code = panel.locator('[data-component-name="CodeBlock/CodeBlockContainer"]');
    const languages = panel.locator('[data-component-name="Panel/PanelHeader"] [data-component-name="Dropdown/Dropdown"]').last();

    for (const sample of op.samples) {
      const picker = languages.locator('button').first();
      if (squash(await picker.innerText()) !== sample.label) {
        await picker.click();
        // The menu opens in a portal at the end of the page.
        await page.getByRole('menuitem', { name: sample.label, exact: true }).filter({ visible: true }).first().click();
      }
      const firstLine = squash(sample.source.split('\n')[0]);
      await code.filter({ hasText: firstLine }).first().waitFor();
      expect(squash(await code.first().innerText())).toBe(squash(sample.source));
    }
    expect(op.samples[1].source).toContain(`client.${op.operationId}(`);

    expect(op.responseExample, 'the 200 response needs an example with a string field').not.toBeNull();
    await page
      .locator('[data-component-name="JsonViewer/JsonViewer"]')
      .filter({ hasText: JSON.stringify(op.responseExample), visible: true })
      .first()
      .waitFor();
    if (op.operationId === operations[0].operationId) await page.screenshot({ path: join(ARTIFACTS, 'docs-operation.png') });
  });

  it('made no request outside 127.0.0.1 and threw no script error', () => {
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

if (!haveChromium && !mustRun) {
  describe('/docs in chromium', () => {
    it.skip(`skipped: ${CHROMIUM} is not installed (apt-get install -y chromium); in CI it is required`, () => {});
  });
}
