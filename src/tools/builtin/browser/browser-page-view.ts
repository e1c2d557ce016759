import { setTimeout as delay } from 'node:timers/promises';
import type { JsonValue } from '../../tool.js';
import { maxPageTextChars, truncatePageText } from './browser-confinement.js';
import type { LivePage } from './browser-pool.js';

/** What the page is after an action, as every browser tool answers. */
export interface PageSummary {
  [key: string]: JsonValue;
}

/** The most characters of the page's URL in an answer (the record keeps up to maxRecordedUrlChars). */
const maxAnswerUrlChars = 2_000;
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
export async function settle(live: LivePage): Promise<void> {
  await live.page.waitForLoadState('domcontentloaded', { timeout: 2_000 }).catch(() => {});
  await delay(windowGraceMs);
  const until = Date.now() + windowWaitMs;
  while (live.windows.refused < live.windows.opened && Date.now() < until) await delay(25);
  live.windows.refused = Math.max(live.windows.refused, live.windows.opened);
}

/** The page's URL and title, and the requests it made that were refused since the last answer. */
export async function summaryOf(live: LivePage): Promise<PageSummary> {
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

/** A picture of the visible page: PNG, or JPEG when the PNG is over `maxBytes`; an error when both are. */
export async function screenshotOf(
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
