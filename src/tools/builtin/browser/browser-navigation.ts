import { truncatePageText } from './browser-confinement.js';
import type { LivePage } from './browser-pool.js';

/** Redirects one navigation may follow. */
const maxRedirects = 10;

/**
 * Opens a URL, following its redirects one at a time (each hop goes through the guard again). Every URL it
 * opens is checked as the model's own is (only http and https: a redirect to chrome: or data: is refused),
 * `subject` naming where it came from in the error. Each load waits at most `timeoutMs`.
 */
export async function navigate(
  live: LivePage,
  url: string,
  timeoutMs: number,
  subject = 'url:',
): Promise<void> {
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
      throw new Error(`too many redirects: more than ${maxRedirects}, the last to ${truncatePageText(next)}`);
    target = httpUrl(next, `${truncatePageText(target)} redirected to ${truncatePageText(next)}:`);
  }
}

/** A navigation the page started (a link, a form) that was redirected goes on to its target. */
export async function followRedirect(live: LivePage, timeoutMs: number): Promise<void> {
  const target = live.redirect;
  live.redirect = undefined;
  if (target !== undefined) {
    await navigate(live, target, timeoutMs, `the page was redirected to ${truncatePageText(target)}:`);
  }
}

/**
 * A page that navigated itself somewhere only http(s) pages may not be (a data: or blob: document, which
 * the worker never sees as a request) is left for about:blank, and the model is told.
 */
export async function leaveStrayPage(live: LivePage, timeoutMs: number): Promise<void> {
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
 * Only http(s): file://, chrome://, data:, javascript: and the like are refused before anything opens, be it
 * the model's URL or one a page redirected to (`subject` names which in the error).
 */
export function httpUrl(text: string, subject = 'url:'): string {
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
