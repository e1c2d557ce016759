import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ConsoleFixture, describeWithBrowser, screenshot } from '../helpers/browser.js';

// Model output is attacker input (DESIGN rule 13): a scripted model puts HTML, script, event-handler
// attributes, javascript: links and bidi overrides in its replies, in tool arguments and results, in a
// question and its options, in an approval, and in the session's notes, tasks and state; a client puts them
// in the input and the session's metadata. Every page shows them as text, and nothing runs: no script
// element, no handler attribute, no javascript: link, no dialog, no page error, no CSP violation, and
// window.__pwned (which every payload would set) stays unset.

const payload = [
  '<script>window.__pwned = "script"</script>',
  `<img src=x onerror="window.__pwned = 'img'; alert('img')">`,
  `<svg onload="window.__pwned = 'svg'"></svg>`,
  `<a href="javascript:window.__pwned='anchor'">click me</a>`,
  'javascript:window.__pwned="bare"',
  '[markdown](javascript:alert(1))',
  'https://example.com/"><img src=x onerror=alert(1)>',
  'invoice\u202Efdp.exe',
  '\u2066isolated\u2069',
].join(' ');

const user = 'user' as const;
const script = {
  rules: [
    {
      when: { role: user, contains: 'render' },
      reply: {
        text: payload,
        tool_calls: [
          { name: 'note_write', arguments: { name: 'hostile', content: payload } },
          { name: 'task_create', arguments: { title: payload, description: payload } },
          { name: 'state_set', arguments: { key: 'hostile', value: { html: payload } } },
          { name: 'add', arguments: { a: 1, b: 2, '<img src=x onerror=alert(2)>': payload } },
        ],
      },
    },
    {
      when: { role: user, contains: 'ask' },
      reply: {
        tool_calls: [
          {
            name: 'ask_user',
            arguments: {
              question: payload,
              options: ['<b>bold</b>', 'javascript:alert(3)', 'left\u202Eright'],
            },
          },
        ],
      },
    },
    {
      when: { role: user, contains: 'echo' },
      reply: { tool_calls: [{ name: 'slow_echo', arguments: { text: payload, delay_ms: 0 } }] },
    },
  ],
  // Every final answer too.
  default: { text: payload },
};

let fixture: ConsoleFixture;
let render: { runId: string; sessionId: string };
let asking: { runId: string; sessionId: string };
let echoing: { runId: string; sessionId: string };

function submit(input: string): Promise<{ runId: string; sessionId: string }> {
  return fixture.submit({ input: `${input} ${payload}`, metadata: { label: payload } });
}

/** Everything that would show a payload ran or became markup. */
async function expectInert(page: Page, where: string): Promise<void> {
  const found = (await page.evaluate(`({
    pwned: window.__pwned ?? null,
    scripts: [...document.scripts].map((element) => element.getAttribute('src')),
    handlers: [...document.querySelectorAll('*')].flatMap((element) =>
      [...element.attributes].filter((attribute) => attribute.name.startsWith('on')).map((attribute) => element.tagName + ' ' + attribute.name)),
    injected: [...document.querySelectorAll('img, iframe, object, embed, svg script, svg foreignObject, b')].map((element) => element.outerHTML),
    links: [...document.querySelectorAll('a[href]')].map((element) => element.getAttribute('href')),
    overrides: /[\\u202a-\\u202e\\u2066-\\u2069]/.test(document.body.innerText),
  })`)) as {
    pwned: string | null;
    scripts: (string | null)[];
    handlers: string[];
    injected: string[];
    links: string[];
    overrides: boolean;
  };
  expect(found.pwned, where).toBeNull();
  expect(found.scripts, where).toEqual(['/console/assets/app.js']);
  expect(found.handlers, where).toEqual([]);
  expect(found.injected, where).toEqual([]);
  // Links are the console's own routes or http(s) URLs; never javascript: or any other scheme.
  for (const link of found.links) expect(link, where).toMatch(/^(#\/|https?:\/\/)/);
  expect(found.overrides, `${where}: a bidi control character is shown raw`).toBe(false);
  const watch = await fixture.watchOf(page);
  expect(watch.dialogs, where).toEqual([]);
  expect(watch.pageErrors, where).toEqual([]);
  expect(watch.cspViolations, where).toEqual([]);
}

/**
 * The payload is on the page as text: its markup as characters (inside JSON too, where its quotes are
 * escaped), its bidi controls written as escapes.
 */
async function expectShownAsText(page: Page, within: string): Promise<void> {
  const textOf = () =>
    page
      .getByTestId(within)
      .evaluate((element) => (element as unknown as { textContent: string }).textContent);
  await expect.poll(textOf, { timeout: 30_000 }).toContain('<script>window.__pwned = ');
  const shown = await textOf();
  for (const piece of [
    '</script>',
    '<img src=x onerror=',
    '<svg onload=',
    'invoice\\u202Efdp.exe',
    '\\u2066isolated\\u2069',
  ]) {
    expect(shown, `${within} shows ${piece}`).toContain(piece);
  }
}

describeWithBrowser('console: hostile model, tool and user text renders as text and runs nothing', () => {
  beforeAll(async () => {
    fixture = await ConsoleFixture.start({
      script,
      harness: {
        agent: {
          toolboxes: ['test', 'utils', 'state', 'tasks', 'notes'],
          tools: { slow_echo: { requires_approval: true } },
        },
      },
    });
    render = await submit('render');
    asking = await submit('ask');
    echoing = await submit('echo');
    await fixture.untilRunStatus(render.runId, 'completed');
    for (const run of [asking, echoing]) await fixture.untilQuestion(run.sessionId);
  });
  afterEach(async () => {
    await fixture.closePages();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('the run page: reply, tool arguments and result, input and final answer', async () => {
    const page = await fixture.openConsole({ route: `#/runs/${render.runId}` });
    await expectShownAsText(page, 'transcript');
    await expectShownAsText(page, 'run-result');
    // Tool calls and results open: their arguments are text too.
    for (const details of await page.locator('[data-testid="transcript"] details').all()) {
      await details.locator('summary').click();
    }
    await page.getByTestId('transcript').getByText('"<img src=x onerror=alert(2)>"').first().waitFor();
    await page.getByTestId('step-row-1').waitFor({ timeout: 30_000 });
    await expectInert(page, 'run page');
    await screenshot(page, 'hostile-run');
  });

  it('the inbox, and answering with a hostile option, and approving a hostile tool call', async () => {
    const page = await fixture.openConsole({ route: '#/inbox' });
    await expect.poll(() => page.getByTestId('inbox-item').count(), { timeout: 30_000 }).toBe(2);
    await expectShownAsText(page, 'inbox-list');
    const options = page.getByTestId('answer-option');
    expect(await options.allTextContents()).toEqual([
      '<b>bold</b>',
      'javascript:alert(3)',
      'left\\u202Eright',
    ]);
    await expectInert(page, 'inbox');
    await screenshot(page, 'hostile-inbox');

    await options.filter({ hasText: 'javascript:alert(3)' }).click();
    await page.getByTestId('approve').click();
    await fixture.untilRunStatus(asking.runId, 'completed');
    await fixture.untilRunStatus(echoing.runId, 'completed');
    // The answer reached the model as the text it was.
    const answered = fixture.api.harness
      .modelCalls()
      .find((call) => call.run_id === asking.runId && call.iteration === 2);
    expect(answered?.messages.at(-1)?.text).toContain('javascript:alert(3)');
    await expectInert(page, 'inbox after answering');

    // The approved call's arguments and result, on its run page.
    await page.goto(`${fixture.consoleUrl}#/runs/${echoing.runId}`);
    await expectShownAsText(page, 'transcript');
    await expectInert(page, 'approved run page');
  });

  it('the session page: metadata, notes, tasks and state', async () => {
    const page = await fixture.openConsole({ route: `#/sessions/${render.sessionId}` });
    await page.getByTestId('session-notes').locator('summary').first().click({ timeout: 30_000 });
    await expectShownAsText(page, 'session-notes');
    await expectShownAsText(page, 'session-tasks');
    await expectShownAsText(page, 'session-metadata');
    await expectShownAsText(page, 'session-state');
    await expectInert(page, 'session page');
    await screenshot(page, 'hostile-session');
  });

  it('the runs and system pages', async () => {
    for (const route of ['#/runs', '#/system']) {
      const page = await fixture.openConsole({ route });
      await page.locator('table').first().waitFor({ timeout: 30_000 });
      await expectInert(page, route);
    }
  });
});
