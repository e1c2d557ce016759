import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import type { JsonValue, ToolContext } from '../../tool.js';
import { defineTool } from '../../tool.js';
import { type ToolOutput, withImages } from '../../tool-result.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { type Resolver, systemResolver } from '../http/ssrf-guard.js';
import { maxPageTextChars, truncatePageText } from './browser-confinement.js';
import {
  currentUrl,
  maxRecordedUrlChars,
  type PageRecord,
  readPageRecord,
  visited,
  writePageRecord,
} from './browser-page-record.js';
import { BrowserPool, type LivePage } from './browser-pool.js';
import { messageOf } from './contained-handler.js';

export interface BrowserToolboxOptions {
  settings: ToolsConfig['browser'];
  /** The workspace (downloads go to its `downloads/` when allowed). */
  workspace: string;
  /** DNS resolution; tests give their own to answer for made-up names. */
  resolve?: Resolver;
  /** The bubblewrap binary for Chromium's network namespace; default `bwrap` from PATH. */
  bwrap?: string;
}

/** A browser toolbox and the pool it keeps its pages in (closed with the worker). */
export interface BrowserToolBox extends ToolBox {
  pool: BrowserPool;
}

/** Redirects one navigation may follow. */
const maxRedirects = 10;
/** The most characters of the page's URL in an answer (the record keeps up to maxRecordedUrlChars). */
const maxAnswerUrlChars = 2_000;
/** The most characters of an error a call answers (it may quote URLs the page chose). */
const maxErrorChars = 2_000;

const selectorSchema = z
  .string()
  .min(1)
  .max(2_000)
  .describe(
    'a Playwright selector: CSS (`#id`, `button.primary`), `text=Sign in`, or `role=button[name="Go"]`',
  );

/** What the page is after an action, as every browser tool answers. */
interface PageSummary {
  [key: string]: JsonValue;
}

/**
 * `browser`: a real Chromium page per run, confined like the http toolbox (every request it makes goes through
 * the SSRF guard), each action bounded in time. The page lives in this worker; the URL it shows is recorded in
 * the session, so a call that lands on another worker (after a crash) reopens it there first (decision 0026).
 */
export function browserToolbox(options: BrowserToolboxOptions): BrowserToolBox {
  const { settings } = options;
  const pool = new BrowserPool({
    settings,
    workspace: options.workspace,
    resolve: options.resolve ?? systemResolver,
    bwrap: options.bwrap,
  });
  const timeoutMs = settings.action_timeout_ms;

  /** The calls of one run take turns on its page (a model may ask for several in one reply). */
  const turns = new Map<string, Promise<unknown>>();
  function inTurn<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = turns.get(runId) ?? Promise.resolve();
    const current = previous.catch(() => {}).then(work);
    turns.set(runId, current);
    const forget = () => {
      if (turns.get(runId) === current) turns.delete(runId);
    };
    current.then(forget, forget);
    return current;
  }

  /** Runs one action on the run's page (reopened from its record first when this worker has none), in turn. */
  function act(
    context: ToolContext,
    name: string,
    action: (live: LivePage, record: PageRecord) => Promise<{ record?: PageRecord; result?: PageSummary }>,
    reopen = true,
  ): Promise<PageSummary> {
    return inTurn(context.runId, async () => {
      try {
        return await actNow(context, name, action, reopen);
      } catch (error) {
        // An error may quote what the page chose (a URL it redirected to): it is bounded like the page's text.
        const message = messageOf(error);
        if (message.length <= maxErrorChars) throw error;
        throw new Error(truncatePageText(message, maxErrorChars));
      }
    });
  }

  async function actNow(
    context: ToolContext,
    name: string,
    action: (live: LivePage, record: PageRecord) => Promise<{ record?: PageRecord; result?: PageSummary }>,
    reopen = true,
  ): Promise<PageSummary> {
    let record = await readPageRecord(context);
    let live = pool.live(context.runId);
    let inCall: LivePage | undefined;
    const run = async () => {
      if (live) {
        inCall = live;
        await pool.enterCall(live);
      } else {
        live = await pool.open(context.runId, context.logger);
        inCall = live;
        const url = currentUrl(record);
        if (reopen && url !== undefined) {
          await navigate(live, url);
          live.restoredFor = context.toolCallId;
        }
      }
      await leaveStrayPage(live);
      const done = await action(live, record);
      record = done.record ?? record;
      await settle(live);
      await followRedirect(live);
      await leaveStrayPage(live);
      const url = live.page.url();
      if (/^https?:/.test(url)) record = visited(record, url);
      return { ...(await summaryOf(live)), ...done.result };
    };
    const overrun = async () => {
      await pool.closeRun(context.runId);
      return new Error(
        `${name}: the page did not finish within ${timeoutMs} ms (tools.browser.action_timeout_ms); it was ` +
          'closed, and the next browser call reopens its URL',
      );
    };
    let summary: PageSummary;
    try {
      // A reopen and the action each have the timeout; the watchdog covers both, and what Playwright does not bound.
      summary = await withinTimeout(run(), 2 * timeoutMs + 2_000, context.signal, overrun);
    } catch (error) {
      // A page that timed out may be stuck in a script: it is closed so its renderer stops.
      if ((error as Error).name === 'TimeoutError') throw await overrun();
      throw error;
    } finally {
      // Between calls the page loads nothing and its scripts wait (browser-load-limits.ts, CallGate).
      if (inCall) await pool.leaveCall(inCall);
    }
    await writePageRecord(context, record);
    if (live?.restoredFor === context.toolCallId) {
      summary.restored =
        'the page was reopened from its URL (the browser that held it had closed): what was typed into it is gone';
    }
    return summary;
  }

  /**
   * A page that navigated itself somewhere only http(s) pages may not be (a data: or blob: document, which
   * the worker never sees as a request) is left for about:blank, and the model is told.
   */
  async function leaveStrayPage(live: LivePage): Promise<void> {
    const stray = live.strayNavigation;
    if (stray === undefined) return;
    live.strayNavigation = undefined;
    live.blocked.push({
      url: truncatePageText(stray),
      reason: 'the page navigated itself to a URL that is not http(s); it was left for about:blank',
    });
    await live.page.goto('about:blank', { timeout: timeoutMs });
    live.strayNavigation = undefined;
  }

  /**
   * Opens a URL, following its redirects one at a time (each hop goes through the guard again). Every URL it
   * opens is checked as the model's own is (only http and https: a redirect to chrome: or data: is refused),
   * `subject` naming where it came from in the error.
   */
  async function navigate(live: LivePage, url: string, subject = 'url:'): Promise<void> {
    let target = httpUrl(url, subject);
    for (let redirects = 0; ; redirects += 1) {
      live.redirect = undefined;
      // An error page still due (a navigation the page itself made and was refused) would interrupt this one.
      await errorPagesCommitted(live);
      try {
        await live.page.goto(target, { waitUntil: 'load', timeout: timeoutMs });
      } catch (error) {
        if (live.redirect === undefined) {
          // The navigation's own refusal says why it failed; a timeout stays a timeout (the page is closed).
          const href = new URL(target).href;
          const refusal = live.blocked.find((blocked) => blocked.url === href);
          if (!refusal || (error as Error).name === 'TimeoutError') throw error;
          live.blocked.splice(live.blocked.indexOf(refusal), 1);
          // Chromium commits its error page for the refused navigation after the refusal is reported: let it,
          // or it would interrupt the next navigation of this page.
          await errorPagesCommitted(live);
          throw new Error(`${refusal.url} was refused: ${refusal.reason}`);
        }
      }
      // Taken, so that no later call follows it again (followRedirect) whatever happens to this one.
      const next = live.redirect as string | undefined;
      live.redirect = undefined;
      if (next === undefined) return;
      if (redirects >= maxRedirects)
        throw new Error(
          `too many redirects: more than ${maxRedirects}, the last to ${truncatePageText(next)}`,
        );
      target = httpUrl(next, `${truncatePageText(target)} redirected to ${truncatePageText(next)}:`);
    }
  }

  /** A navigation the page started (a link, a form) that was redirected goes on to its target. */
  async function followRedirect(live: LivePage): Promise<void> {
    const target = live.redirect;
    live.redirect = undefined;
    if (target !== undefined) {
      await navigate(live, target, `the page was redirected to ${truncatePageText(target)}:`);
    }
  }

  const open = defineTool({
    name: 'browser_open',
    description:
      'Opens an http(s) URL in the browser (one page per run; links that open a new window are not followed: ' +
      'open their URL). Answers the page title and URL, and any request of the page that was refused.',
    inputSchema: z.strictObject({
      url: z.string().min(1).max(maxRecordedUrlChars).describe('an absolute http or https URL'),
    }),
    idempotent: true,
    handler: async (context, input) => {
      const url = httpUrl(input.url);
      return act(
        context,
        'browser_open',
        async (live) => {
          await navigate(live, url);
          return {};
        },
        false,
      );
    },
  });

  const click = defineTool({
    name: 'browser_click',
    description: 'Clicks the first element the selector matches (waiting for it to be visible and enabled).',
    inputSchema: z.strictObject({ selector: selectorSchema }),
    idempotent: false,
    handler: async (context, input) =>
      act(context, 'browser_click', async (live) => {
        await live.page.locator(input.selector).first().click({ timeout: timeoutMs });
        return {};
      }),
  });

  const type = defineTool({
    name: 'browser_type',
    description:
      'Fills a text field (replacing what it held) and, with submit, presses Enter in it afterwards.',
    inputSchema: z.strictObject({
      selector: selectorSchema,
      text: z.string().max(100_000),
      submit: z.boolean().optional().describe('press Enter after typing (default false)'),
    }),
    idempotent: false,
    handler: async (context, input) =>
      act(context, 'browser_type', async (live) => {
        const field = live.page.locator(input.selector).first();
        await field.fill(input.text, { timeout: timeoutMs });
        if (input.submit) await field.press('Enter', { timeout: timeoutMs });
        return {};
      }),
  });

  const select = defineTool({
    name: 'browser_select',
    description: 'Chooses options of a <select> by their value or label.',
    inputSchema: z.strictObject({
      selector: selectorSchema,
      values: z.array(z.string().max(1_000)).min(1).max(100),
    }),
    idempotent: false,
    handler: async (context, input) =>
      act(context, 'browser_select', async (live) => {
        const chosen = await live.page
          .locator(input.selector)
          .first()
          .selectOption(input.values, { timeout: timeoutMs });
        // The values are the page's: an option's value may be of any length.
        return { result: { selected: chosen.map((value) => truncatePageText(value)) } };
      }),
  });

  const wait = defineTool({
    name: 'browser_wait',
    description: `Waits until a text or a selector appears on the page (at most ${timeoutMs} ms).`,
    inputSchema: z
      .strictObject({
        text: z.string().min(1).max(1_000).optional(),
        selector: selectorSchema.optional(),
      })
      .refine((input) => (input.text === undefined) !== (input.selector === undefined), {
        message: 'give either text or selector',
      }),
    idempotent: true,
    handler: async (context, input) =>
      act(context, 'browser_wait', async (live) => {
        const target =
          input.text === undefined
            ? live.page.locator(input.selector ?? 'body')
            : live.page.getByText(input.text);
        await target.first().waitFor({ state: 'visible', timeout: timeoutMs });
        return {};
      }),
  });

  const read = defineTool({
    name: 'browser_read',
    description:
      'Reads the page (or the element a selector matches): its visible text, or with format "snapshot" its ' +
      `accessibility tree (roles, names, states). Cut at ${settings.max_text_chars} characters.`,
    inputSchema: z.strictObject({
      format: z.enum(['text', 'snapshot']).optional().describe('default text'),
      selector: selectorSchema.optional(),
    }),
    idempotent: true,
    handler: async (context, input) =>
      act(context, 'browser_read', async (live) => {
        const target = live.page.locator(input.selector ?? 'body').first();
        const max = settings.max_text_chars;
        // The text is cut inside the page, so a huge page never crosses to the worker whole.
        const full =
          input.format === 'snapshot'
            ? await target.ariaSnapshot({ timeout: timeoutMs })
            : await target.evaluate(
                (element, limit) =>
                  // biome-ignore lint/performance/useDomNodeTextContent: the text as shown (no script or hidden text) is what the model reads
                  (element as unknown as { innerText: string }).innerText.slice(0, limit + 1),
                max,
                { timeout: timeoutMs },
              );
        const truncated = full.length > max;
        return { result: { content: full.slice(0, max), ...(truncated ? { truncated: true } : {}) } };
      }),
  });

  const screenshot = defineTool({
    name: 'browser_screenshot',
    description: `Takes a picture of the visible part of the page (${settings.viewport_width}×${settings.viewport_height}).`,
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context): Promise<ToolOutput> => {
      let image: { data: string; media_type: string } | undefined;
      const summary = await act(context, 'browser_screenshot', async (live) => {
        image = await screenshotOf(live, settings.max_screenshot_bytes, timeoutMs);
        return {};
      });
      return image ? withImages(summary, [image]) : summary;
    },
  });

  const back = defineTool({
    name: 'browser_back',
    description: 'Goes back to the previous page the run opened.',
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context) =>
      act(
        context,
        'browser_back',
        async (live, record) => {
          const previous = record.history[record.index - 1];
          if (record.index === 0 || previous === undefined)
            throw new Error('there is no earlier page to go back to');
          await navigate(live, previous);
          return { record: { ...record, index: record.index - 1 } };
        },
        false,
      ),
  });

  const toolbox = createToolBox('browser', [open, click, type, select, wait, read, screenshot, back]);
  return {
    ...toolbox,
    pool,
    close: () => pool.close(),
    runEnded: (runId) => void pool.closeRun(runId),
  };
}

/** How long a call waits for a window its action may still open (a form's submission is a task of its own). */
const windowGraceMs = 150;
/** The most a call waits for the windows it opened to be reported. */
const windowWaitMs = 2_000;

/**
 * Lets a navigation the action started reach its document (a click on a link), within a short bound, and a
 * window it opened (window.open, a target=_blank link or form) be refused and reported in this call's answer:
 * a window appears a little after the action that opens it, and asks for its document a little later still.
 * A window that asks for none (window.open() of nothing) is given up on after the bound.
 */
async function settle(live: LivePage): Promise<void> {
  await live.page.waitForLoadState('domcontentloaded', { timeout: 2_000 }).catch(() => {});
  await delay(windowGraceMs);
  const until = Date.now() + windowWaitMs;
  while (live.windows.refused < live.windows.opened && Date.now() < until) await delay(25);
  live.windows.refused = Math.max(live.windows.refused, live.windows.opened);
}

async function summaryOf(live: LivePage): Promise<PageSummary> {
  const summary: PageSummary = {
    url: truncatePageText(live.page.url(), maxAnswerUrlChars),
    title: await titleOf(live),
  };
  if (live.blocked.length > 0) {
    summary.blocked = live.blocked.map((blocked) => ({ url: blocked.url, reason: blocked.reason }));
    live.blocked.length = 0;
  }
  return summary;
}

/**
 * The page's title, cut inside the page, in a JavaScript world of the worker's own: the page's scripts
 * cannot redefine what it runs (document.title's getter, String.prototype.slice), so a title of any size
 * never crosses to the worker whole.
 */
async function titleOf(live: LivePage): Promise<string> {
  const title = await evaluateIsolated(live, `document.title.slice(0, ${maxPageTextChars + 1})`);
  return truncatePageText(typeof title === 'string' ? title : '');
}

/** Evaluates an expression in the main frame, in an isolated world (the page shares its DOM, not its JS). */
async function evaluateIsolated(live: LivePage, expression: string): Promise<unknown> {
  const { frameTree } = await live.devtools.send('Page.getFrameTree');
  const { executionContextId } = await live.devtools.send('Page.createIsolatedWorld', {
    frameId: frameTree.frame.id,
    worldName: 'ratchet-browser',
  });
  const evaluated = await live.devtools.send('Runtime.evaluate', {
    expression,
    contextId: executionContextId,
    returnByValue: true,
  });
  if (evaluated.exceptionDetails)
    throw new Error(`reading the page failed: ${evaluated.exceptionDetails.text}`);
  return evaluated.result.value;
}

async function screenshotOf(
  live: LivePage,
  maxBytes: number,
  timeoutMs: number,
): Promise<{ data: string; media_type: string }> {
  const common = { timeout: timeoutMs, animations: 'disabled', caret: 'hide' } as const;
  const png = await live.page.screenshot({ ...common, type: 'png' });
  if (png.length <= maxBytes) return { data: png.toString('base64'), media_type: 'image/png' };
  const jpeg = await live.page.screenshot({ ...common, type: 'jpeg', quality: 60 });
  if (jpeg.length <= maxBytes) return { data: jpeg.toString('base64'), media_type: 'image/jpeg' };
  throw new Error(
    `the screenshot is ${jpeg.length} bytes even as JPEG, more than tools.browser.max_screenshot_bytes ` +
      `(${maxBytes}): lower viewport_width/viewport_height or raise the limit`,
  );
}

/**
 * Only http(s): file://, chrome://, data:, javascript: and the like are refused before anything opens, be it
 * the model's URL or one a page redirected to (`subject` names which in the error).
 */
function httpUrl(text: string, subject = 'url:'): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(
      `${subject} "${text.slice(0, 200)}" is not an absolute URL (e.g. https://example.com/path)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${subject} only http and https pages may be opened, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '')
    throw new Error(`${subject} credentials in the URL are not allowed`);
  return url.href;
}

/**
 * Resolves with the action, or rejects when it takes longer than `timeoutMs` (after `onTimeout`, which closes
 * the page so a renderer stuck in a script stops) or when the call is aborted. Playwright's own timeouts
 * bound each operation; this also bounds those it does not (title, a reopen followed by the action).
 */
async function withinTimeout<T>(
  action: Promise<T>,
  timeoutMs: number,
  signal: AbortSignal,
  onTimeout: () => Promise<Error>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      action,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => void onTimeout().then(reject, reject), timeoutMs);
        onAbort = () => reject(signal.reason);
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Waits (at most 2 s) until Chromium has committed the error page of every refused navigation of the page.
 * Counted, not read from the URL: a page already showing an error page gets another one for each refusal.
 */
async function errorPagesCommitted(live: LivePage): Promise<void> {
  const { errorPages } = live;
  if (errorPages.committed >= errorPages.due) return;
  await live.page
    .waitForEvent('framenavigated', {
      predicate: () => errorPages.committed >= errorPages.due,
      timeout: 2_000,
    })
    .catch(() => {});
  // Past the wait (Chromium did not commit one): what is due is forgotten, so no later call waits for it.
  errorPages.committed = Math.max(errorPages.committed, errorPages.due);
}
