import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, inject, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createLogger, silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import type { KeySpace } from '../../src/redis/keys.js';
import { defineScripts } from '../../src/redis/scripts.js';
import { redisSessionData } from '../../src/redis/session-data-store.js';
import { type BrowserToolBox, browserToolbox } from '../../src/tools/builtin/browser/browser-toolbox.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { html, type PageServer, shopSite, startPageServer } from '../helpers/browser-pages.js';
import { deleteKeys } from '../helpers/harness.js';
import { callError, callOk, sessionAccess, toolContext, toolsSettings } from '../helpers/tool-calls.js';

// The toolbox's pool of pages, driven directly (as a worker's tool step calls it) against a real Redis.
let redis: Redis;
let space: KeySpace;
let site: PageServer;
let workspace: string;
const toolboxes: BrowserToolBox[] = [];

beforeAll(async () => {
  redis = createRedis({ url: inject('redisUrl'), logger: silentLogger(), name: 'browser-pool-test' });
  defineScripts(redis);
  space = { prefix: `t-${randomBytes(6).toString('hex')}`, shards: 4 };
  site = await startPageServer(shopSite(() => 9));
  workspace = mkdtempSync(join(tmpdir(), 'ratchet-browser-'));
});
afterEach(async () => {
  await Promise.allSettled(toolboxes.splice(0).map((toolbox) => toolbox.close?.()));
});
afterAll(async () => {
  await site.close();
  await deleteKeys(redis, space.prefix);
  await closeRedis(redis);
  rmSync(workspace, { recursive: true, force: true });
});

function toolbox(
  browser: Record<string, unknown> = {},
  inWorkspace = workspace,
  bwrap: string | undefined = undefined,
): BrowserToolBox {
  const created = browserToolbox({
    settings: toolsSettings({ browser: { private_hosts: ['127.0.0.1'], ...browser } }).browser,
    workspace: inWorkspace,
    ...(bwrap === undefined ? {} : { bwrap }),
  });
  toolboxes.push(created);
  return created;
}

/** Processes under this one (the in-process pool's Chromium and its helpers), from /proc. */
function descendants(): { pid: number; command: string }[] {
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid ...: the command may hold spaces and parentheses, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      parents.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
      commands.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
    } catch {
      // gone already
    }
  }
  const under = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (parent === process.pid) return true;
    }
    return false;
  };
  return [...parents.keys()].filter(under).map((pid) => ({ pid, command: commands.get(pid) ?? '' }));
}

function networkNamespaceOf(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

const sessionId = `ses_${randomBytes(8).toString('hex')}`;
function contextOf(runId: string, toolCallId = 'call_1') {
  return toolContext({
    sessionId,
    runId,
    toolCallId,
    session: sessionAccess({ data: redisSessionData(redis, space, sessionId) }),
  });
}

describeWithBrowser('browser pool', () => {
  it('names the setting when no browser is found', async () => {
    const missing = toolbox({ executable_path: '/nonexistent/chromium' });
    expect(
      await callError(missing, 'browser_open', { url: `${site.origin}/` }, contextOf('run_a')),
    ).toContain('tools.browser.executable_path: /nonexistent/chromium is not an executable file');
  });

  it('runs Chromium in a network namespace of its own, where nothing of the worker’s network is', async () => {
    const browser = toolbox();
    await callOk(browser, 'browser_open', { url: `${site.origin}/` }, contextOf('run_netns'));
    expect(browser.pool.networkIsolated).toBe(true);
    const chromium = descendants().filter((process) => /chrom/.test(process.command));
    expect(chromium.length).toBeGreaterThan(0);
    const namespaces = chromium.flatMap(({ pid }) => networkNamespaceOf(pid) ?? []);
    expect(namespaces.length).toBeGreaterThan(0);
    expect(namespaces).not.toContain(networkNamespaceOf('self'));
  });

  it('without bubblewrap: auto warns and runs Chromium directly, required refuses naming the setting', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'warn',
      destination: { write: (line: string) => lines.push(line) },
    });
    const fallback = toolbox({}, workspace, '/nonexistent/bwrap');
    const opened = await callOk(
      fallback,
      'browser_open',
      { url: `${site.origin}/` },
      { ...contextOf('run_no_bwrap'), logger },
    );
    expect(opened).toMatchObject({ title: 'Shop' });
    expect(fallback.pool.networkIsolated).toBe(false);
    expect(lines.join('\n')).toContain(
      'tools.browser: Chromium runs without a network namespace of its own (bubblewrap (/nonexistent/bwrap) was not found',
    );
    const strict = toolbox({ network_namespace: 'required' }, workspace, '/nonexistent/bwrap');
    expect(
      await callError(strict, 'browser_open', { url: `${site.origin}/` }, contextOf('run_strict')),
    ).toContain(
      'tools.browser.network_namespace is "required", but bubblewrap (/nonexistent/bwrap) was not found',
    );
  });

  it('closes a run’s page when the run ends; the next call reopens it from the recorded URL', async () => {
    const browser = toolbox();
    await callOk(browser, 'browser_open', { url: `${site.origin}/form` }, contextOf('run_end'));
    expect(browser.pool.live('run_end')).toBeDefined();
    browser.runEnded?.('run_end');
    expect(browser.pool.live('run_end')).toBeUndefined();
    const read = await callOk(browser, 'browser_read', { selector: 'h1' }, contextOf('run_end'));
    expect(read).toMatchObject({ url: `${site.origin}/form`, content: 'Order a mug' });
    expect(read.restored).toContain('reopened');
  });

  it('runs calls of one run that come together one after the other, on one page', async () => {
    const browser = toolbox();
    await callOk(browser, 'browser_open', { url: `${site.origin}/form` }, contextOf('run_together'));
    browser.runEnded?.('run_together');
    // Both find no page: each would open one, and the second would close the first's under it.
    const [heading, title] = await Promise.all([
      callOk(browser, 'browser_read', { selector: 'h1' }, contextOf('run_together', 'call_h1')),
      callOk(browser, 'browser_read', { selector: 'title' }, contextOf('run_together', 'call_title')),
    ]);
    expect(heading).toMatchObject({ content: 'Order a mug', restored: expect.any(String) });
    expect(title).toMatchObject({ url: `${site.origin}/form` });
    expect(title).not.toHaveProperty('restored');
  });

  it('says the page was reopened on every attempt of the call that reopened it, and on no later call', async () => {
    const browser = toolbox();
    await callOk(
      browser,
      'browser_open',
      { url: `${site.origin}/form` },
      contextOf('run_again', 'call_open'),
    );
    browser.runEnded?.('run_again');
    const first = await callOk(
      browser,
      'browser_read',
      { selector: 'h1' },
      contextOf('run_again', 'call_read'),
    );
    expect(first).toHaveProperty('restored');
    // The attempt above may end before its result is committed (its lock lost): the next attempt of the same
    // call finds the page open, and must still say what the model would otherwise not know.
    const again = await callOk(
      browser,
      'browser_read',
      { selector: 'h1' },
      contextOf('run_again', 'call_read'),
    );
    expect(again).toMatchObject({ content: 'Order a mug', restored: expect.any(String) });
    const later = await callOk(
      browser,
      'browser_read',
      { selector: 'h1' },
      contextOf('run_again', 'call_next'),
    );
    expect(later).not.toHaveProperty('restored');
  });

  it('keeps at most max_pages pages: the least recently used is closed, and reopened when its run comes back', async () => {
    const browser = toolbox({ max_pages: 1 });
    await callOk(browser, 'browser_open', { url: `${site.origin}/` }, contextOf('run_one'));
    await callOk(browser, 'browser_open', { url: `${site.origin}/form` }, contextOf('run_two'));
    expect(browser.pool.live('run_one')).toBeUndefined();
    const back = await callOk(browser, 'browser_read', { selector: 'h1' }, contextOf('run_one'));
    expect(back).toMatchObject({ title: 'Shop', content: 'Welcome to the shop' });
    expect(browser.pool.live('run_two')).toBeUndefined();
  });

  it('posts a form and follows its 303 to the page that answers', async () => {
    const browser = toolbox();
    const context = contextOf('run_post');
    await callOk(browser, 'browser_open', { url: `${site.origin}/post-form` }, context);
    await callOk(browser, 'browser_type', { selector: '#item', text: 'tea' }, context);
    const sent = await callOk(browser, 'browser_click', { selector: '#send' }, context);
    expect(sent).toMatchObject({ url: `${site.origin}/received?item=tea`, title: 'Received' });
    expect(await callOk(browser, 'browser_read', { selector: '#got' }, context)).toMatchObject({
      content: 'Got tea',
    });
  });

  it('refuses a screenshot larger than max_screenshot_bytes, naming the setting', async () => {
    const browser = toolbox({ max_screenshot_bytes: 1_000 });
    await callOk(browser, 'browser_open', { url: `${site.origin}/` }, contextOf('run_shot'));
    expect(await callError(browser, 'browser_screenshot', {}, contextOf('run_shot'))).toContain(
      'tools.browser.max_screenshot_bytes (1000)',
    );
  });

  it('keeps every cookie a response sets', async () => {
    const browser = toolbox();
    await callOk(browser, 'browser_open', { url: `${site.origin}/cookies` }, contextOf('run_cookies'));
    const read = await callOk(browser, 'browser_read', { selector: '#jar' }, contextOf('run_cookies'));
    expect(read.content).toBe('flavour=ginger; size=large');
  });

  it('saves downloads in the workspace only when downloads are allowed', async () => {
    const browser = toolbox({ downloads: true });
    await callOk(browser, 'browser_open', { url: `${site.origin}/download` }, contextOf('run_download'));
    await callOk(browser, 'browser_click', { selector: '#file' }, contextOf('run_download'));
    const saved = join(workspace, 'downloads/file.bin');
    const deadline = Date.now() + 10_000;
    while (!existsSync(saved) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    // Written under a temporary name and renamed: once the file is there, it is whole.
    expect(readdirSync(join(workspace, 'downloads'))).toEqual(['file.bin']);
    expect(readFileSync(saved)).toEqual(Buffer.alloc(1024, 7));
  });

  it('bridges a page’s WebSocket to a server the guard allows, both ways, and closes it with the page', async () => {
    const echo = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((listening) => echo.once('listening', () => listening()));
    const echoPort = (echo.address() as { port: number }).port;
    const received: string[] = [];
    let closed = false;
    echo.on('connection', (connection) => {
      connection.on('message', (data) => {
        received.push(data.toString());
        connection.send(`echo ${data.toString()}`);
      });
      connection.on('close', () => {
        closed = true;
      });
    });
    // 127.0.0.1 is in the tests' private_hosts, as a public server would be allowed.
    const page = await startPageServer((_request, response) =>
      html(
        response,
        `<title>socket</title><p id="status">waiting</p><script>
          const socket = new WebSocket('ws://127.0.0.1:${echoPort}/echo');
          socket.onopen = () => socket.send('ping');
          socket.onmessage = (event) => { document.getElementById('status').textContent = 'got ' + event.data; };
        </script>`,
      ),
    );
    try {
      const browser = toolbox();
      const context = contextOf('run_socket');
      await callOk(browser, 'browser_open', { url: `${page.origin}/` }, context);
      await callOk(browser, 'browser_wait', { text: 'got echo ping' }, context);
      expect(received).toEqual(['ping']);
      await browser.pool.closeRun('run_socket');
      const deadline = Date.now() + 10_000;
      while (!closed && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
      expect(closed).toBe(true);
    } finally {
      await page.close();
      await new Promise<void>((done) => echo.close(() => done()));
    }
  });

  it('refuses a download into a downloads directory the model linked outside the workspace', async () => {
    const own = mkdtempSync(join(tmpdir(), 'ratchet-browser-linked-'));
    const outside = mkdtempSync(join(tmpdir(), 'ratchet-browser-outside-'));
    try {
      // What a hostile model could do with run_command: `ln -s /somewhere/else downloads`.
      symlinkSync(outside, join(own, 'downloads'));
      const browser = toolbox({ downloads: true }, own);
      const context = contextOf('run_linked');
      await callOk(browser, 'browser_open', { url: `${site.origin}/download` }, context);
      const clicked = await callOk(browser, 'browser_click', { selector: '#file' }, context);
      // The refusal reaches the model with the click's answer, or with its next call.
      const reasons: string[] = (clicked.blocked ?? []).map((blocked: { reason: string }) => blocked.reason);
      const deadline = Date.now() + 10_000;
      while (reasons.length === 0 && Date.now() < deadline) {
        const read = await callOk(browser, 'browser_read', {}, context);
        for (const blocked of read.blocked ?? []) reasons.push(blocked.reason);
        if (reasons.length === 0) await new Promise((done) => setTimeout(done, 50));
      }
      expect(reasons.join('\n')).toMatch(/download failed: .*outside the workspace/);
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(own, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
