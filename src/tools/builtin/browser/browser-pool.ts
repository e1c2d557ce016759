import { randomUUID } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Frame, LaunchOptions, Page } from 'playwright-core';
import { harmlessRequestHeaders, type ToolsConfig } from '../../../config/index.js';
import type { Logger } from '../../../log/index.js';
import { guardedFetch } from '../http/guarded-fetch.js';
import type { Resolver } from '../http/ssrf-guard.js';
import { openInWorkspace, resolveInWorkspace } from '../workspace/workspace-path.js';
import {
  type BlockedRequest,
  confineContext,
  confinementPolicy,
  truncatePageText,
} from './browser-confinement.js';
import { BytesInFlight, CallGate } from './browser-load-limits.js';
import { type ChromiumCommand, chromiumCommand } from './browser-network-namespace.js';
import { containedHandler, messageOf } from './contained-handler.js';

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
  /** Open while a browser call acts on the page; between calls the page loads nothing and its scripts wait. */
  gate: CallGate;
  /** The page's DevTools session: its scripts are suspended between calls, and titles read in a world of ours. */
  devtools: CDPSession;
  /** A navigation the page made by itself to a URL that is not http(s) (a data: page, ...): it is left. */
  strayNavigation: string | undefined;
  /**
   * Windows the page opened, and those whose document was refused (reported in `blocked`): a call waits,
   * within a bound, until each window it opened is reported, so the model hears of it in that call's answer.
   */
  windows: { opened: number; refused: number };
}

export interface BrowserPoolOptions {
  settings: ToolsConfig['browser'];
  /** Where downloads go when allowed (`<workspace>/downloads`). */
  workspace: string;
  resolve: Resolver;
  /** The bubblewrap binary for Chromium's network namespace; default `bwrap` from PATH. */
  bwrap?: string | undefined;
}

/** What a page's main frame may show; anything else it navigates to by itself is left (see strayNavigation). */
const pageSchemes = /^(https?:|about:blank)/;
/** Requests refused are reported; past this many per page, the rest are dropped. */
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
  private command: ChromiumCommand | undefined;
  /** Bytes of responses all pages hold in the worker at once (tools.browser.max_bytes_in_flight). */
  readonly bytesInFlight: BytesInFlight;
  private readonly pages = new Map<string, LivePage>();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: BrowserPoolOptions) {
    this.options = options;
    this.bytesInFlight = new BytesInFlight({
      capacity: options.settings.max_bytes_in_flight,
      setting: 'tools.browser.max_bytes_in_flight',
    });
  }

  /** Whether Chromium runs in a network namespace of its own; undefined before it is first launched. */
  get networkIsolated(): boolean | undefined {
    return this.command?.isolated;
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

  /**
   * A new, blank page for the run (closing its earlier one, and the least used page when full), in a call:
   * its gate is open, and the caller leaves it (`leaveCall`) when the call ends.
   */
  async open(runId: string, logger: Logger): Promise<LivePage> {
    if (this.closed) throw new Error('the browser is shut down (the worker is stopping)');
    await this.closeRun(runId);
    while (this.pages.size >= this.options.settings.max_pages) {
      const oldest = [...this.pages.values()].sort((a, b) => a.lastUsedMs - b.lastUsedMs)[0];
      if (!oldest) break;
      await this.closeRun(oldest.runId);
    }
    const { settings } = this.options;
    const browser = await this.launch(logger);
    const context = await browser.newContext({
      viewport: { width: settings.viewport_width, height: settings.viewport_height },
      acceptDownloads: settings.downloads,
      serviceWorkers: 'block',
      javaScriptEnabled: true,
    });
    const closing = new AbortController();
    const gate = new CallGate();
    gate.enter();
    const entry: LivePage = {
      runId,
      context,
      page: undefined as unknown as Page,
      blocked: [],
      redirect: undefined,
      lastUsedMs: Date.now(),
      closing,
      errorPages: { due: 0, committed: 0 },
      gate,
      devtools: undefined as unknown as CDPSession,
      strayNavigation: undefined,
      windows: { opened: 0, refused: 0 },
    };
    const report = (blocked: BlockedRequest) => {
      if (entry.blocked.length < maxBlockedReported) entry.blocked.push(blocked);
    };
    try {
      await confineContext(context, {
        settings,
        resolve: this.options.resolve,
        signal: closing.signal,
        bytesInFlight: this.bytesInFlight,
        gate,
        ownsFrame: (frame) => frame.page() === entry.page,
        onBlocked: (blocked, pageNavigation) => {
          report(blocked);
          if (pageNavigation) entry.errorPages.due += 1;
        },
        onWindowRefused: () => {
          entry.windows.refused += 1;
        },
        onRedirect: (target) => {
          entry.redirect = target;
        },
      });
      context.setDefaultTimeout(settings.action_timeout_ms);
      context.setDefaultNavigationTimeout(settings.action_timeout_ms);
      entry.page = await context.newPage();
      // The model acts on one page per run: windows the page opens (window.open, target=_blank) are closed,
      // and their requests refused by the confinement.
      context.on(
        'page',
        containedHandler(
          (page: Page) => {
            if (page === entry.page) return undefined;
            entry.windows.opened += 1;
            return page.close();
          },
          () => {},
        ),
      );
      entry.devtools = await context.newCDPSession(entry.page);
      entry.page.on(
        'framenavigated',
        containedHandler(
          (frame: Frame) => {
            if (frame !== entry.page.mainFrame()) return;
            const url = frame.url();
            if (url.startsWith('chrome-error:')) entry.errorPages.committed += 1;
            else if (!pageSchemes.test(url)) entry.strayNavigation = url;
          },
          () => {},
        ),
      );
    } catch (error) {
      closing.abort();
      await context.close().catch(() => {});
      throw error;
    }
    if (settings.downloads) {
      // Chromium's own download would go to its (dead) proxy: the worker fetches the file through the guard.
      entry.page.on(
        'download',
        containedHandler(
          (download) => {
            void download.cancel().catch(() => {});
            return this.saveDownload(entry, download.url(), download.suggestedFilename());
          },
          (error) => report({ url: '', reason: truncatePageText(`download failed: ${messageOf(error)}`) }),
        ),
      );
    }
    this.pages.set(runId, entry);
    this.scheduleIdleSweep();
    return entry;
  }

  /**
   * A browser call on the run's page begins: the page may load again, and its scripts run. A page whose
   * DevTools session no longer answers is not used: the error says so (the caller closes it).
   */
  async enterCall(entry: LivePage): Promise<void> {
    entry.gate.enter();
    await entry.devtools.send('Emulation.setScriptExecutionDisabled', { value: false });
  }

  /** The call ends: the page loads nothing until the next, and its scripts wait (see CallGate). */
  async leaveCall(entry: LivePage): Promise<void> {
    entry.gate.leave();
    if (entry.gate.open || entry.page.isClosed()) return;
    await entry.devtools.send('Emulation.setScriptExecutionDisabled', { value: true }).catch(() => {});
  }

  /** Fetches a file the page downloads (checked like every request) into `<workspace>/downloads/`. */
  private async saveDownload(entry: LivePage, url: string, suggestedName: string): Promise<void> {
    const { settings } = this.options;
    const signal = AbortSignal.any([entry.closing.signal, AbortSignal.timeout(settings.action_timeout_ms)]);
    let hold: Awaited<ReturnType<BytesInFlight['hold']>> | undefined;
    try {
      hold = await this.bytesInFlight.hold(64 * 1024, signal);
      const bodyHold = hold;
      const response = await guardedFetch(
        { method: 'GET', url, headers: {} },
        {
          policy: confinementPolicy(settings),
          resolve: this.options.resolve,
          maxRedirects: 10,
          maxResponseBytes: settings.max_resource_bytes,
          forwardHeadersOnRedirect: harmlessRequestHeaders,
          signal,
          holdBody: (total) => bodyHold.grow(total, signal),
        },
      );
      const name = basename(suggestedName).replace(/^\.+/, '').slice(0, 200) || 'download';
      await saveInWorkspace(this.options.workspace, `downloads/${name}`, response.body);
    } catch (error) {
      if (entry.blocked.length < maxBlockedReported) {
        entry.blocked.push({
          url: truncatePageText(url),
          reason: truncatePageText(`download failed: ${messageOf(error)}`),
        });
      }
    } finally {
      hold?.release();
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
    await this.command?.cleanup().catch(() => {});
    this.command = undefined;
  }

  private launch(logger: Logger): Promise<Browser> {
    if (!this.browser) {
      const { settings } = this.options;
      // Loaded at the first browser call: a worker without one never pays for playwright-core (~0.5 s of
      // startup CPU and its memory).
      const launching = (async () => {
        const { chromium } = await import('playwright-core');
        this.command ??= await chromiumCommand({
          settings,
          chromium: findBrowserExecutable(settings),
          logger,
          bwrap: this.options.bwrap,
        });
        return chromium.launch(browserLaunchOptions(settings, this.command.executablePath));
      })();
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
 * How Chromium is launched: the machine's binary (never a download; `executablePath` may be the script that
 * starts it in a network namespace of its own, see chromiumCommand), headless unless configured, with a proxy
 * that does not exist, so nothing reaches the network except what the confinement sends for it. WebRTC may
 * not use UDP unless through that proxy, which has none: no ICE candidates, no STUN or TURN packets, to any
 * address (the policy is Chromium's, for every frame and worker; a page cannot change it). Chromium's own
 * sandbox cannot run as root, so it is switched off only then (containers, CI).
 */
export function browserLaunchOptions(
  settings: ToolsConfig['browser'],
  executablePath: string,
): LaunchOptions {
  return {
    executablePath,
    headless: settings.headless,
    chromiumSandbox: process.getuid?.() !== 0,
    timeout: 60_000,
    proxy: { server: 'http://127.0.0.1:9' },
    args: [
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
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
