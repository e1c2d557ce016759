import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { ApiHarness, type ApiHarnessOptions } from '../api/api-harness.js';
import { waitFor } from './crash-scenario.js';

const repoRoot = resolve(import.meta.dirname, '../..');

/** Where the console tests write their screenshots (git-ignored); the README names it. */
export const screenshotDir = join(repoRoot, 'test-results/console');

const installHint = 'apt-get install chromium (or set RATCHET_CHROMIUM to a Chromium binary)';

/**
 * The Chromium the browser tests drive: RATCHET_CHROMIUM when set, else Debian's `chromium` on PATH. The tests
 * never download a browser; playwright-core only speaks the DevTools protocol to the one on the machine.
 */
export function findChromium(): string | undefined {
  const candidates = process.env.RATCHET_CHROMIUM ? [process.env.RATCHET_CHROMIUM] : ['chromium'];
  for (const command of candidates) {
    const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { encoding: 'utf8' });
    const path = found.stdout.trim();
    if (found.status === 0 && path !== '') return path;
  }
  return undefined;
}

const chromiumPath = findChromium();

/**
 * `describe` for a file of browser tests. Without a Chromium on the machine the file is skipped with one test
 * whose name says what to install; under CI (`CI=true`) it fails instead, since .ci/run installs Chromium and a
 * skip there would hide a broken install step.
 */
export function describeWithBrowser(name: string, body: () => void): void {
  if (chromiumPath !== undefined) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    if (process.env.CI === 'true') {
      it('needs Chromium (CI installs it in .ci/run)', () => {
        throw new Error(`no Chromium found on PATH under CI: ${installHint}`);
      });
    } else {
      const reason = `skipped: no Chromium found on PATH — ${installHint}`;
      // The default reporter names a skipped file but not why: say it on stderr too.
      console.warn(`${name}: ${reason}`);
      it(reason, (context) => context.skip(reason));
    }
  });
}

/**
 * Launches the machine's Chromium headless. Chromium's own sandbox cannot run as root (it refuses to start), so
 * the sandbox is switched off (`--no-sandbox`) only when the tests run as root, as in CI and containers; a
 * developer's ordinary account keeps it.
 */
export async function launchBrowser(): Promise<Browser> {
  if (chromiumPath === undefined) throw new Error(`no Chromium found: ${installHint}`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    chromiumSandbox: process.getuid?.() !== 0,
    timeout: 30_000,
  });
}

/** Writes `test-results/console/<name>.png` (the whole page) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * axe-core's serious and critical findings on the page as it is now (WCAG 2.x A and AA rules), one line each
 * with the elements concerned: an empty list is a pass.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} — ${violation.nodes
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
}

export interface ConsolePageOptions {
  /** Default 1280×800. */
  viewport?: { width: number; height: number };
  /** The hash route to open, e.g. `#/inbox` (default: the console's start page). */
  route?: string;
}

/**
 * What a page did that the console must never let it do, collected as it happens: dialogs (alert/confirm/
 * prompt), Content-Security-Policy violations, uncaught page errors and console errors.
 */
export interface PageWatch {
  dialogs: string[];
  cspViolations: string[];
  pageErrors: string[];
  consoleErrors: string[];
}

/**
 * The API (with an in-process worker and a scripted model, see ApiHarness) and one browser for a test file.
 * Pages are opened in their own context each (no shared sessionStorage) and closed by `closePages`, which a
 * file calls in afterEach; `close` (afterAll) closes them, the browser and the API.
 */
export class ConsoleFixture {
  readonly api: ApiHarness;
  readonly browser: Browser;
  private readonly contexts = new Set<BrowserContext>();
  private readonly watches = new WeakMap<Page, PageWatch>();

  private constructor(api: ApiHarness, browser: Browser) {
    this.api = api;
    this.browser = browser;
  }

  static async start(options: ApiHarnessOptions): Promise<ConsoleFixture> {
    // The API serves the console from dist/console, which `npm run build` writes (npm install and .ci/run
    // run it); without it every page would be the 503 that says so.
    const built = join(repoRoot, 'dist/console/index.html');
    if (!existsSync(built))
      throw new Error(`the console is not built (${built} is missing): run npm run build`);
    const api = await ApiHarness.start(options);
    try {
      return new ConsoleFixture(api, await launchBrowser());
    } catch (error) {
      await api.close();
      throw error;
    }
  }

  get consoleUrl(): string {
    return `${this.api.url}/console`;
  }

  /** Starts a run through the API (POST /v1/runs, the body as the API takes it; 202 expected). */
  async submit(body: Record<string, unknown>): Promise<{ runId: string; sessionId: string }> {
    const submitted = await this.api.request('POST', '/v1/runs', { body });
    if (submitted.status !== 202)
      throw new Error(`POST /v1/runs: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    return { runId: submitted.body.run_id, sessionId: submitted.body.session_id };
  }

  /** The run as GET /v1/runs/:id answers it. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  async run(runId: string): Promise<any> {
    return (await this.api.request('GET', `/v1/runs/${runId}`)).body;
  }

  /** Waits (30 s at most) until the API says the run has this status. */
  async untilRunStatus(runId: string, status: string): Promise<void> {
    await waitFor(async () => (await this.run(runId)).status === status, 30_000, `run ${runId} ${status}`);
  }

  /** Waits (30 s at most) until the session has a pending question. */
  async untilQuestion(sessionId: string): Promise<void> {
    await waitFor(
      async () =>
        (await this.api.request('GET', `/v1/sessions/${sessionId}/questions`)).body.questions.length > 0,
      30_000,
      `a question in ${sessionId}`,
    );
  }

  /** A fresh context and page on `<api>/console<route>`, waiting until the page has loaded. */
  async openConsole(options: ConsolePageOptions = {}): Promise<Page> {
    const context = await this.browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 800 },
    });
    this.contexts.add(context);
    const page = await context.newPage();
    const watch: PageWatch = { dialogs: [], cspViolations: [], pageErrors: [], consoleErrors: [] };
    this.watches.set(page, watch);
    page.on('dialog', (dialog) => {
      watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss().catch(() => {});
    });
    page.on('pageerror', (error) => watch.pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') watch.consoleErrors.push(message.text());
    });
    // Counted in the page from its first script on, before the console's own code runs. A string, since the
    // tests are compiled without the DOM's types.
    await page.addInitScript({
      content: `window.__cspViolations = [];
        document.addEventListener('securitypolicyviolation', (event) => {
          window.__cspViolations.push(event.violatedDirective + ' ' + event.blockedURI);
        });`,
    });
    await page.goto(`${this.consoleUrl}${options.route ?? ''}`, { waitUntil: 'load' });
    return page;
  }

  /** What the page did so far (dialogs, CSP violations, errors). */
  async watchOf(page: Page): Promise<PageWatch> {
    const watch = this.watches.get(page);
    if (watch === undefined) throw new Error('not a page of this fixture');
    watch.cspViolations = (await page.evaluate('window.__cspViolations ?? []')) as string[];
    return watch;
  }

  /** Closes every page and context opened so far (afterEach). */
  async closePages(): Promise<void> {
    const contexts = [...this.contexts];
    this.contexts.clear();
    await Promise.allSettled(contexts.map((context) => context.close()));
  }

  /** Closes the pages, the browser (its processes end with it) and the API with its worker (afterAll). */
  async close(): Promise<void> {
    try {
      await this.closePages();
      await this.browser.close();
    } finally {
      await this.api.close();
    }
  }
}
