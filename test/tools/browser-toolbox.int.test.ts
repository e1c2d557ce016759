import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { type PageServer, saveScreenshot, shopSite, startPageServer } from '../helpers/browser-pages.js';
import { watchEventLoop } from '../helpers/event-loop-gaps.js';
import { Harness } from '../helpers/harness.js';

let site: PageServer;
/** Where hostile pages try to go: `localhost`, which the browser may not reach (it is not in private_hosts). */
let internal: PageServer;
let harness: Harness | undefined;

beforeAll(async () => {
  internal = await startPageServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('secret');
  });
  site = await startPageServer(shopSite(() => internal.port));
});
afterAll(async () => {
  await site.close();
  await internal.close();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (name: string, args: Record<string, unknown> = {}) => ({
  text: `calling ${name}`,
  tool_calls: [{ name, arguments: args }],
});

/** Runs the script with the browser toolbox (loopback 127.0.0.1 trusted, as the http toolbox tests trust it). */
async function browse(script: Script, browser: Record<string, unknown> = {}) {
  harness = new Harness({
    script,
    maxIterations: 30,
    agent: { toolboxes: ['browser'] },
    config: {
      tools: {
        workspace: 'workspace',
        browser: { private_hosts: ['127.0.0.1'], action_timeout_ms: 5_000, ...browser },
      },
    },
  });
  mkdirSync(join(harness.dir, 'workspace'), { recursive: true });
  // The worker runs in this process: a blocked event loop would show as a long gap between ticks.
  await harness.startWorker();
  const loop = watchEventLoop();
  let longestGap = 0;
  let sessionId: string;
  try {
    const started = await harness.engine.startRun({ input: 'browse' });
    sessionId = started.sessionId;
    const run = await harness.engine.waitForRun(started.runId, { timeoutMs: 120_000 });
    expect(run.status).toBe('completed');
  } finally {
    longestGap = loop.stop();
  }
  const chat = await harness.transcript(sessionId);
  const events = await harness.events(sessionId);
  const calls = chat.flatMap((message) => (message.role === 'assistant' ? message.parts : []));
  // Each call ran once: a step whose worker looked stalled would have been taken over and run again.
  expect(events.filter((event) => event.kind === 'tool_call_end')).toHaveLength(
    calls.filter((part) => part.type === 'tool_call').length,
  );
  return { chat, events, results: chat.filter((message) => message.role === 'tool'), longestGap };
}

function resultOf(message: Message | undefined) {
  const [result] = toolResultsOf(message ?? { parts: [] });
  if (!result) throw new Error('no tool result');
  return result;
}

/** The parsed JSON of a successful result. */
// biome-ignore lint/suspicious/noExplicitAny: tests read fields of the page summaries
function ok(message: Message | undefined): any {
  const result = resultOf(message);
  if (result.is_error) throw new Error(`expected success, got: ${result.content}`);
  return JSON.parse(result.content);
}

function failure(message: Message | undefined): string {
  const result = resultOf(message);
  if (!result.is_error) throw new Error(`expected an error, got: ${result.content}`);
  return result.content;
}

describeWithBrowser('browser toolbox', () => {
  it('opens a page, fills and sends a form, reads the answer, goes back, and sends a screenshot', async () => {
    const { results, events } = await browse({
      replies: [
        call('browser_open', { url: `${site.origin}/` }),
        call('browser_screenshot'),
        call('browser_click', { selector: '#form-link' }),
        call('browser_type', { selector: '#name', text: 'Ada' }),
        call('browser_select', { selector: '#colour', values: ['blue'] }),
        call('browser_click', { selector: 'role=button[name="Order"]' }),
        call('browser_wait', { text: 'Thank you' }),
        call('browser_read', {}),
        call('browser_read', { format: 'snapshot' }),
        call('browser_back'),
        { text: 'done' },
      ],
    });
    expect(ok(results[0])).toMatchObject({ url: `${site.origin}/`, title: 'Shop' });
    const shot = resultOf(results[1]);
    expect(shot.images?.[0]?.media_type).toBe('image/png');
    const path = saveScreenshot(results[1], 'shop-home');
    expect(existsSync(path)).toBe(true);
    // The event that announced the result carries its text, not the image (the chat keeps it).
    const announced = events.find(
      (event) => event.kind === 'message_added' && event.data.message.id === results[1]?.id,
    );
    expect(announced?.kind === 'message_added' && announced.data.message.parts).toEqual([
      { type: 'tool_result', tool_call_id: shot.tool_call_id, content: shot.content, is_error: false },
    ]);
    expect(ok(results[2])).toMatchObject({ url: `${site.origin}/form`, title: 'Order' });
    expect(ok(results[4]).selected).toEqual(['blue']);
    expect(ok(results[5])).toMatchObject({ url: `${site.origin}/ordered?name=Ada&colour=blue` });
    expect(ok(results[7]).content).toBe('Thank you Ada, one blue mug is on its way.');
    expect(ok(results[8]).content).toContain('paragraph: Thank you Ada, one blue mug is on its way.');
    expect(ok(results[9])).toMatchObject({ url: `${site.origin}/form`, title: 'Order' });
  });

  it('keeps hostile pages from reaching internal addresses: redirects, scripts, sockets, images', async () => {
    const { results } = await browse({
      replies: [
        call('browser_open', { url: `${site.origin}/redirect-internal` }),
        call('browser_open', { url: `${site.origin}/redirect-metadata` }),
        call('browser_open', { url: `http://localhost:${internal.port}/direct` }),
        call('browser_open', { url: `${site.origin}/hostile-script` }),
        call('browser_wait', { text: 'finished' }),
        call('browser_read', { selector: '#status' }),
        { text: 'done' },
      ],
    });
    expect(failure(results[0])).toMatch(
      /"localhost" resolves to (127\.0\.0\.1|::1), which is a loopback address.*tools\.browser\.private_hosts/,
    );
    expect(failure(results[1])).toContain('"169.254.169.254" is a link-local address');
    expect(failure(results[2])).toContain('loopback address');
    const waited = ok(results[4]);
    const read = ok(results[5]);
    expect(read.content).toBe('finished: metadata refused, internal refused, socket refused, image refused');
    const opened = JSON.parse(resultOf(results[3]).content);
    const blocked = JSON.stringify([opened.blocked, waited.blocked, read.blocked]);
    // Refusals are reported once, by the call after which they happened.
    expect(JSON.stringify(opened.blocked)).not.toContain('/direct');
    expect(blocked).toContain('169.254.169.254');
    expect(blocked).toContain('10.0.0.1');
    expect(blocked).toContain(`ws://localhost:${internal.port}/socket`);
    // Nothing reached the internal server, by any of the routes tried.
    expect(internal.requests).toEqual([]);
  });

  it('refuses file:, chrome: and data: pages, and a page cannot navigate itself to a file', async () => {
    const { results } = await browse({
      replies: [
        call('browser_open', { url: 'file:///etc/passwd' }),
        call('browser_open', { url: 'chrome://version' }),
        call('browser_open', { url: 'data:text/html,<h1>hi</h1>' }),
        call('browser_open', { url: `${site.origin}/to-file` }),
        call('browser_read', {}),
        { text: 'done' },
      ],
    });
    expect(failure(results[0])).toContain('only http and https pages may be opened, not file:');
    expect(failure(results[1])).toContain('not chrome:');
    expect(failure(results[2])).toContain('not data:');
    const read = ok(results[4]);
    expect(read.url).toBe(`${site.origin}/to-file`);
    expect(read.content).not.toContain('root:');
  });

  it('bounds a huge page, stops an endless script, and cancels downloads', async () => {
    const { results, longestGap } = await browse(
      {
        replies: [
          call('browser_open', { url: `${site.origin}/huge` }),
          call('browser_read', {}),
          call('browser_open', { url: `${site.origin}/endless` }),
          call('browser_open', { url: `${site.origin}/` }),
          call('browser_open', { url: `${site.origin}/download` }),
          call('browser_click', { selector: '#file' }),
          call('browser_read', {}),
          { text: 'done' },
        ],
      },
      { max_text_chars: 2_000, action_timeout_ms: 10_000 },
    );
    const huge = ok(results[1]);
    expect(huge.truncated).toBe(true);
    expect(huge.content).toHaveLength(2_000);
    expect(huge.content.startsWith('row 0\nrow 1\n')).toBe(true);
    expect(failure(results[2])).toContain('tools.browser.action_timeout_ms');
    // The stuck page was closed; the next call gets a working one.
    expect(ok(results[3])).toMatchObject({ title: 'Shop' });
    expect(ok(results[6]).content).toContain('Get the file');
    expect(existsSync(join(harness?.dir ?? '', 'workspace/downloads'))).toBe(false);
    // Generous: the page's script and DOM run in Chromium's processes, never on the worker's loop.
    expect(longestGap).toBeLessThan(1_000);
  });
});
