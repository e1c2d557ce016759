import { z } from 'zod';
import type { ToolsConfig } from '../../../config/index.js';
import { defineTool } from '../../tool.js';
import { type ToolOutput, withImages } from '../../tool-result.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { type Resolver, systemResolver } from '../http/ssrf-guard.js';
import { pageActions } from './browser-actions.js';
import { truncatePageText } from './browser-confinement.js';
import { httpUrl, navigate } from './browser-navigation.js';
import { maxRecordedUrlChars } from './browser-page-record.js';
import { screenshotOf } from './browser-page-view.js';
import { BrowserPool } from './browser-pool.js';

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

const selectorSchema = z
  .string()
  .min(1)
  .max(2_000)
  .describe(
    'a Playwright selector: CSS (`#id`, `button.primary`), `text=Sign in`, or `role=button[name="Go"]`',
  );

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
  const act = pageActions(pool, timeoutMs);

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
          await navigate(live, url, timeoutMs);
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
          await navigate(live, previous, timeoutMs);
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
