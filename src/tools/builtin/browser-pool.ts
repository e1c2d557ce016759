import { randomUUID } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import type { Browser, BrowserContext, LaunchOptions, Page } from 'playwright-core';
import type { ToolsConfig } from '../../config/index.js';
import { type BlockedRequest, confineContext, confinementPolicy } from './browser-confinement.js';
import { guardedFetch, harmlessRequestHeaders } from './guarded-fetch.js';
import type { Resolver } from './ssrf-guard.js';
import { openInWorkspace, resolveInWorkspace } from './workspace-path.js';

/** One run's page in this worker, with what its page was refused since the model last heard. */
export interface LivePage {
  runId: string;
  context: BrowserContext;
  page: Page;
  blocked: BlockedRequest[];
  /** Where the last navigation of the page was redirected to (the toolbox follows it). */
  redirect: string | undefined;
  lastUsedMs: number;
  /** Aborted when the page closes: its requests in flight stop. */
  closing: AbortController;
  /**
   * The tool call that reopened the page from the run's record: its result says so, on every attempt of that
   * call (an attempt that reopened it may end before its result is committed, and the next finds it open).
   */
  restoredFor?: string;
  /**
   * Chromium's error pages for refused navigations of the page: how many are due (one per refusal) and how
   * many have committed. One still due interrupts the next navigation, so the toolbox waits for it first.
   */
  errorPages: { due: number; committed: number };
}

export interface BrowserPoolOptions {
  settings: ToolsConfig['browser'];
  /** Where downloads go when allowed (`<workspace>/downloads`). */
  workspace: string;
  resolve: Resolver;
}

/** Requests refused are reported; past this many per page, the rest are counted only. */
const maxBlockedReported = 20;
const browserNames = ['chromium', 'chromium-browser', 'google-chrome'];

/**
 * The worker's one Chromium, launched at the first browser call, and a page per run in a context of its own
 * (cookies and storage are not shared between runs). Bounded: at most `max_pages` pages, the least recently
 * used closed first; a page idle for `idle_close_ms` is closed; `close` (worker shutdown) ends them all.
 * A closed page is not lost for its run: the toolbox reopens it from the run's recorded URL (decision 0026).
 */
export class BrowserPool {
  private readonly options: BrowserPoolOptions;
  private browser: Promise<Browser> | undefined;
  private readonly pages = new Map<string, LivePage>();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: BrowserPoolOptions) {
    this.options = options;
  }

  /** The run's page when this worker has it open. */
  live(runId: string): LivePage | undefined {
    const entry = this.pages.get(runId);
    if (entry?.page.isClosed()) {
      this.pages.delete(runId);
      return undefined;
    }
    if (entry) entry.lastUsedMs = Date.now();
    return entry;
  }

  /** A new, blank page for the run (closing its earlier one, and the least used page when full). */
  async open(runId: string): Promise<LivePage> {
    if (this.closed) throw new Error('the browser is shut down (the worker is stopping)');
    await this.closeRun(runId);
    while (this.pages.size >= this.options.settings.max_pages) {
      const oldest = [...this.pages.values()].sort((a, b) => a.lastUsedMs - b.lastUsedMs)[0];
      if (!oldest) break;
      await this.closeRun(oldest.runId);
    }
    const { settings } = this.options;
    const browser = await this.launch();
    const context = await browser.newContext({
      viewport: { width: settings.viewport_width, height: settings.viewport_height },
      acceptDownloads: settings.downloads,
      serviceWorkers: 'block',
      javaScriptEnabled: true,
    });
    const closing = new AbortController();
    const entry: LivePage = {
      runId,
      context,
      page: undefined as unknown as Page,
      blocked: [],
      redirect: undefined,
      lastUsedMs: Date.now(),
      closing,
      errorPages: { due: 0, committed: 0 },
    };
    try {
      await confineContext(context, {
        settings,
        resolve: this.options.resolve,
        signal: closing.signal,
        onBlocked: (blocked, pageNavigation) => {
          if (entry.blocked.length < maxBlockedReported) entry.blocked.push(blocked);
          if (pageNavigation) entry.errorPages.due += 1;
        },
        onRedirect: (target) => {
          entry.redirect = target;
        },
      });
      context.setDefaultTimeout(settings.action_timeout_ms);
      context.setDefaultNavigationTimeout(settings.action_timeout_ms);
      entry.page = await context.newPage();
      entry.page.on('framenavigated', (frame) => {
        if (frame === entry.page.mainFrame() && frame.url().startsWith('chrome-error:')) {
          entry.errorPages.committed += 1;
        }
      });
    } catch (error) {
      closing.abort();
      await context.close().catch(() => {});
      throw error;
    }
    // The model acts on one page per run: windows a page opens (window.open, target=_blank) are closed.
    context.on('page', (page) => {
      if (page !== entry.page) void page.close().catch(() => {});
    });
    if (settings.downloads) {
      // Chromium's own download would go to its (dead) proxy: the worker fetches the file through the guard.
      entry.page.on('download', (download) => {
        void download.cancel().catch(() => {});
        void this.saveDownload(entry, download.url(), download.suggestedFilename());
      });
    }
    this.pages.set(runId, entry);
    this.scheduleIdleSweep();
    return entry;
  }

  /** Fetches a file the page downloads (checked like every request) into `<workspace>/downloads/`. */
  private async saveDownload(entry: LivePage, url: string, suggestedName: string): Promise<void> {
    const { settings } = this.options;
    try {
      const response = await guardedFetch(
        { method: 'GET', url, headers: {} },
        {
          policy: confinementPolicy(settings),
          resolve: this.options.resolve,
          maxRedirects: 10,
          maxResponseBytes: settings.max_resource_bytes,
          forwardHeadersOnRedirect: harmlessRequestHeaders,
          signal: AbortSignal.any([entry.closing.signal, AbortSignal.timeout(settings.action_timeout_ms)]),
        },
      );
      const name = basename(suggestedName).replace(/^\.+/, '') || 'download';
      await saveInWorkspace(this.options.workspace, `downloads/${name}`, response.body);
    } catch (error) {
      entry.blocked.push({ url, reason: `download failed: ${(error as Error).message}` });
    }
  }

  /** Closes the run's page and context, if this worker has them. */
  async closeRun(runId: string): Promise<void> {
    const entry = this.pages.get(runId);
    if (!entry) return;
    this.pages.delete(runId);
    entry.closing.abort();
    await closeWithin(entry.context, this.options.settings.action_timeout_ms);
  }

  /** Closes every page and the browser (worker shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    await Promise.allSettled([...this.pages.keys()].map((runId) => this.closeRun(runId)));
    const launching = this.browser;
    this.browser = undefined;
    const browser = launching === undefined ? undefined : await launching.catch(() => undefined);
    await browser?.close().catch(() => {});
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // Loaded at the first browser call: a worker without one never pays for playwright-core (~0.5 s of
      // startup CPU and its memory).
      const launching = import('playwright-core').then(({ chromium }) =>
        chromium.launch(browserLaunchOptions(this.options.settings)),
      );
      this.browser = launching;
      // A failed launch is tried again at the next call (the binary may have been installed since).
      launching.then(
        (browser) => browser.on('disconnected', () => this.forget(launching)),
        () => this.forget(launching),
      );
    }
    return this.browser;
  }

  private forget(browser: Promise<Browser>): void {
    if (this.browser !== browser) return;
    this.browser = undefined;
    this.pages.clear();
  }

  private scheduleIdleSweep(): void {
    if (this.idleTimer) return;
    const idleMs = this.options.settings.idle_close_ms;
    this.idleTimer = setInterval(
      () => {
        const now = Date.now();
        for (const entry of this.pages.values()) {
          if (now - entry.lastUsedMs >= idleMs) void this.closeRun(entry.runId);
        }
        if (this.pages.size === 0 && this.idleTimer) {
          clearInterval(this.idleTimer);
          this.idleTimer = undefined;
        }
      },
      Math.min(idleMs, 60_000),
    );
    // An idle page never keeps a worker process alive.
    this.idleTimer.unref();
  }
}

/**
 * How Chromium is launched: the machine's binary (never a download), headless unless configured, with a
 * proxy that does not exist, so nothing reaches the network except what the confinement sends for it; WebRTC
 * may not use UDP outside that proxy (no ICE candidates to internal addresses). Chromium's own sandbox cannot
 * run as root, so it is switched off only then (containers, CI).
 */
export function browserLaunchOptions(settings: ToolsConfig['browser']): LaunchOptions {
  return {
    executablePath: findBrowserExecutable(settings),
    headless: settings.headless,
    chromiumSandbox: process.getuid?.() !== 0,
    timeout: 60_000,
    proxy: { server: 'http://127.0.0.1:9' },
    args: [
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-domain-reliability',
      '--no-pings',
      '--js-flags=--max-old-space-size=512',
    ],
    // The worker stops the browser itself (close), and a dead worker's browser ends with its pipe.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  };
}

/** tools.browser.executable_path, else RATCHET_CHROMIUM, else chromium (or Chrome) on PATH. */
export function findBrowserExecutable(settings: ToolsConfig['browser']): string {
  const configured = settings.executable_path ?? process.env.RATCHET_CHROMIUM;
  if (configured !== undefined && configured !== '') {
    if (!isExecutable(configured)) {
      const setting = settings.executable_path ? 'tools.browser.executable_path' : 'RATCHET_CHROMIUM';
      throw new Error(`${setting}: ${configured} is not an executable file`);
    }
    return configured;
  }
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of browserNames) {
      const candidate = join(directory, name);
      if (directory !== '' && isExecutable(candidate)) return candidate;
    }
  }
  throw new Error(
    'no Chromium found on PATH: install it (Debian: apt-get install chromium) or set ' +
      'tools.browser.executable_path to a Chromium or Chrome binary',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A context whose renderer hangs may not answer close: it is left to the browser after the timeout. */
async function closeWithin(context: BrowserContext, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    context.close().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * Writes a downloaded file into the workspace as the filesystem tools write: the path checked against
 * symbolic links out of the workspace (a `downloads` the model linked elsewhere is refused), the file opened
 * without following links and checked again on its handle. It is written under a temporary name and renamed,
 * so the file never appears half written.
 */
async function saveInWorkspace(workspace: string, path: string, body: Buffer): Promise<void> {
  const target = await resolveInWorkspace(workspace, path);
  await mkdir(dirname(target.absolute), { recursive: true });
  const partial = await resolveInWorkspace(
    workspace,
    join(dirname(target.relative), `.${basename(target.relative)}.${randomUUID()}.part`),
  );
  const handle = await openInWorkspace(
    workspace,
    partial,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
  );
  try {
    await handle.writeFile(body);
  } finally {
    await handle.close();
  }
  await rename(partial.absolute, target.absolute);
}
