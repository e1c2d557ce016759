import type { ToolContext } from '../../tool.js';
import { truncatePageText } from './browser-confinement.js';
import { followRedirect, leaveStrayPage, navigate } from './browser-navigation.js';
import {
  currentUrl,
  type PageRecord,
  readPageRecord,
  visited,
  writePageRecord,
} from './browser-page-record.js';
import { type PageSummary, settle, summaryOf } from './browser-page-view.js';
import type { BrowserPool, LivePage } from './browser-pool.js';
import { messageOf } from './contained-handler.js';

/** The most characters of an error a call answers (it may quote URLs the page chose). */
const maxErrorChars = 2_000;

/** What one browser tool does on the run's page; it may move the page's record (going back) and add to the answer. */
export type PageAction = (
  live: LivePage,
  record: PageRecord,
) => Promise<{ record?: PageRecord; result?: PageSummary }>;

/**
 * Runs one action on the run's page (reopened from its record first when this worker has none, unless
 * `reopen` is false), in turn with the run's other calls, bounded in time, and answers what the page is after
 * it. `name` is the tool's, for errors.
 */
export type ActOnPage = (
  context: ToolContext,
  name: string,
  action: PageAction,
  reopen?: boolean,
) => Promise<PageSummary>;

/** How the browser toolbox's calls act on the pages of `pool`, each action bounded by `timeoutMs`. */
export function pageActions(pool: BrowserPool, timeoutMs: number): ActOnPage {
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

  async function actNow(
    context: ToolContext,
    name: string,
    action: PageAction,
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
          await navigate(live, url, timeoutMs);
          live.restoredFor = context.toolCallId;
        }
      }
      await leaveStrayPage(live, timeoutMs);
      const done = await action(live, record);
      record = done.record ?? record;
      await settle(live);
      await followRedirect(live, timeoutMs);
      await leaveStrayPage(live, timeoutMs);
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

  return (context, name, action, reopen = true) =>
    inTurn(context.runId, async () => {
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
