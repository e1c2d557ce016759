import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeWithBrowser } from '../helpers/browser.js';
import { html, type PageServer, shopSite, startPageServer } from '../helpers/browser-pages.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { descendantsOf, isAlive } from '../helpers/process-tree.js';
import { callTool } from './mcp-client.js';
import { ToolboxWorld, toolboxSecret } from './toolbox-world.js';

/**
 * The git, search, utils and browser toolboxes served by `ratchet mcp --toolboxes …` (the compiled CLI,
 * started by the SDK's stdio client), with the confinement an agent's calls get: the workspace (paths and
 * links that leave it refused), the SSRF guard of the browser, and the config's secrets redacted from every
 * result. The caller is an attacker.
 */

let world: ToolboxWorld | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await world?.close();
  world = undefined;
});

/** The test's own git, with an identity whatever the machine's global config says. */
function git(repo: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
}

describe('ratchet mcp --toolboxes git,search,utils (stdio)', () => {
  it('runs git in the workspace repository: status, add, diff, commit, log; paths outside refused', async () => {
    world = new ToolboxWorld({
      tools: { git: { author_name: 'Mcp Tester', author_email: 'mcp@localhost' } },
    });
    git(world.workspace, ['init', '-q']);
    const client = await world.connect(clients, { toolboxes: 'git' });
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['git_add', 'git_commit', 'git_diff', 'git_log', 'git_status']);

    expect((await callTool(client, 'git_log', {})).text).toContain('(no commits yet)');
    const status = await callTool(client, 'git_status', {});
    expect(status.isError, status.text).toBe(false);
    expect(status.text).toContain('?? notes.txt');
    expect(status.text).toContain('?? leak.txt');

    // Paths that leave the repository, however written, are refused and stage nothing.
    for (const path of ['../outside.txt', join(world.dir, 'outside.txt'), '../../../../etc/passwd']) {
      const escaped = await callTool(client, 'git_add', { paths: [path] });
      expect(escaped.isError, path).toBe(true);
      const diffed = await callTool(client, 'git_diff', { paths: [path] });
      expect(diffed.isError, path).toBe(true);
      expect(diffed.text).not.toContain('OUTSIDE-MARKER-CONTENT');
    }
    expect(git(world.workspace, ['diff', '--cached', '--name-only'])).toBe('');
    const nothing = await callTool(client, 'git_commit', { message: 'empty' });
    expect(nothing.isError).toBe(true);
    expect(nothing.text).toContain('nothing is staged');

    const added = await callTool(client, 'git_add', { paths: ['notes.txt', 'leak.txt'] });
    expect(added.isError, added.text).toBe(false);
    expect(JSON.parse(added.text)).toEqual({ staged: ['notes.txt', 'leak.txt'] });
    // The staged diff shows the files, the secret one redacted.
    const staged = await callTool(client, 'git_diff', { staged: true });
    expect(staged.text).toContain('+the workspace file');
    expect(staged.text).toContain('+the key is');
    expect(staged.text).not.toContain(toolboxSecret);

    const committed = await callTool(client, 'git_commit', {
      message: 'Add the notes\n\nfrom an MCP client',
    });
    expect(committed.isError, committed.text).toBe(false);
    const commit = JSON.parse(committed.text);
    expect(commit).toMatchObject({ subject: 'Add the notes' });
    // The commit is in the repository, by the configured author.
    expect(git(world.workspace, ['rev-parse', 'HEAD']).trim()).toBe(commit.commit);
    expect(git(world.workspace, ['log', '-1', '--format=%an <%ae> %s'])).toBe(
      'Mcp Tester <mcp@localhost> Add the notes\n',
    );
    const log = await callTool(client, 'git_log', { max_count: 5 });
    expect(log.text).toContain('Mcp Tester');
    expect(log.text).toContain('Add the notes');

    writeFileSync(join(world.workspace, 'notes.txt'), 'changed over MCP\n');
    const diff = await callTool(client, 'git_diff', { paths: ['notes.txt'] });
    expect(diff.text).toContain('-the workspace file');
    expect(diff.text).toContain('+changed over MCP');
    expect((await callTool(client, 'git_status', {})).text).toContain(' M notes.txt');
  }, 180_000);

  it('searches the workspace files (glob, grep), never outside it, with secrets redacted; utils compute', async () => {
    world = new ToolboxWorld();
    // A link out of the workspace: the walk must not follow it to the file beside the config.
    symlinkSync(world.dir, join(world.workspace, 'escape'));
    writeFileSync(join(world.workspace, 'code.ts'), 'export const answer = 42;\n');
    const client = await world.connect(clients, { toolboxes: 'search,utils' });
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['calculate', 'glob', 'grep', 'word_count']);

    const globbed = await callTool(client, 'glob', { pattern: '**/*.txt' });
    expect(globbed.isError, globbed.text).toBe(false);
    const paths = JSON.parse(globbed.text).paths as string[];
    expect(paths.sort()).toEqual(['leak.txt', 'notes.txt']);

    const grepped = await callTool(client, 'grep', { pattern: 'answer\\s*=\\s*\\d+', include: '**/*.ts' });
    expect(JSON.parse(grepped.text).matches).toEqual([
      { path: 'code.ts', line: 1, text: 'export const answer = 42;' },
    ]);
    // A line holding a secret the config knows is found, and the secret is not in the answer.
    const secretLine = await callTool(client, 'grep', { pattern: 'the key is' });
    expect(secretLine.text).toContain('leak.txt');
    expect(secretLine.text).not.toContain(toolboxSecret);

    // Outside the workspace: by path, by absolute path, through the link.
    for (const path of ['..', world.dir, '../outside.txt', '/etc']) {
      const escaped = await callTool(client, 'grep', { pattern: 'OUTSIDE', path });
      expect(escaped.isError, `${path}: ${escaped.text}`).toBe(true);
      expect(escaped.text).not.toContain('OUTSIDE-MARKER-CONTENT');
      const listed = await callTool(client, 'glob', { pattern: '*', path });
      expect(listed.isError, `${path}: ${listed.text}`).toBe(true);
    }
    const everywhere = await callTool(client, 'grep', { pattern: 'OUTSIDE-MARKER' });
    expect(everywhere.isError, everywhere.text).toBe(false);
    expect(JSON.parse(everywhere.text).matches).toEqual([]);
    const throughLink = await callTool(client, 'grep', { pattern: 'OUTSIDE-MARKER', path: 'escape' });
    expect(throughLink.text).not.toContain('OUTSIDE-MARKER-CONTENT');
    // A pattern that is not a regular expression is refused, naming the field.
    const badPattern = await callTool(client, 'grep', { pattern: '(' });
    expect(badPattern.isError).toBe(true);
    expect(badPattern.text).toContain('pattern');

    expect(JSON.parse((await callTool(client, 'calculate', { expression: '(2 + 3) * 4' })).text)).toEqual({
      expression: '(2 + 3) * 4',
      result: 20,
    });
    const notArithmetic = await callTool(client, 'calculate', { expression: 'process.exit(1)' });
    expect(notArithmetic.isError).toBe(true);
    expect(JSON.parse((await callTool(client, 'word_count', { text: 'three small words' })).text)).toEqual({
      words: 3,
      characters: 17,
    });
    // The server still answers: nothing above stopped it.
    expect((await client.listTools()).tools.length).toBe(4);
  }, 180_000);
});

let site: PageServer | undefined;
/** An internal service the browser may not reach: `localhost`, which resolves to loopback (not trusted). */
let internal: PageServer | undefined;

describeWithBrowser('ratchet mcp --toolboxes browser (stdio, headless Chromium)', () => {
  beforeAll(async () => {
    internal = await startPageServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret');
    });
    const shop = shopSite(() => internal?.port ?? 0);
    site = await startPageServer((request, response, server) => {
      if (request.url === '/leaky') {
        return html(
          response,
          `<!doctype html><html><head><title>Leaky</title></head><body><p id="key">key: ${toolboxSecret}</p></body></html>`,
        );
      }
      return shop(request, response, server);
    });
  });
  afterAll(async () => {
    await site?.close();
    await internal?.close();
  });

  it('drives a real page through a form; private addresses refused; secrets redacted', async () => {
    const origin = site?.origin ?? '';
    // 127.0.0.1 is trusted (the site); `localhost` is not, as in the browser toolbox's own tests.
    world = new ToolboxWorld({
      tools: { browser: { private_hosts: ['127.0.0.1'], action_timeout_ms: 20_000 } },
    });
    const client = await world.connect(clients, { toolboxes: 'browser' });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['browser_open', 'browser_click', 'browser_read']));

    const opened = await callTool(client, 'browser_open', { url: `${origin}/form` });
    expect(opened.isError, opened.text).toBe(false);
    expect(JSON.parse(opened.text)).toMatchObject({ url: `${origin}/form`, title: 'Order' });
    // The page is kept for the connection: the next calls act on it.
    expect((await callTool(client, 'browser_type', { selector: '#name', text: 'Ada' })).isError).toBe(false);
    const selected = await callTool(client, 'browser_select', { selector: '#colour', values: ['blue'] });
    expect(selected.isError, selected.text).toBe(false);
    const clicked = await callTool(client, 'browser_click', { selector: '#order' });
    expect(clicked.isError, clicked.text).toBe(false);
    const thanks = await callTool(client, 'browser_read', { selector: '#thanks' });
    expect(JSON.parse(thanks.text).content).toBe('Thank you Ada, one blue mug is on its way.');
    const shot = await client.callTool({ name: 'browser_screenshot', arguments: {} }, undefined, {
      timeout: 60_000,
    });
    const image = (shot.content as { type: string; mimeType?: string; data?: string }[]).find(
      (part) => part.type === 'image',
    );
    expect(image?.mimeType).toMatch(/^image\/(png|jpeg)$/);
    expect(Buffer.from(image?.data ?? '', 'base64').length).toBeGreaterThan(1_000);

    // The SSRF guard: a loopback name that is not trusted, the metadata address, a redirect to either,
    // and a page whose scripts, sockets and images try them.
    for (const url of [
      `http://localhost:${internal?.port}/direct`,
      'http://169.254.169.254/latest/meta-data/',
      `${origin}/redirect-internal`,
      `${origin}/redirect-metadata`,
    ]) {
      const refused = await callTool(client, 'browser_open', { url });
      expect(refused.isError, url).toBe(true);
      expect(refused.text).toMatch(/loopback address|link-local address/);
    }
    expect((await callTool(client, 'browser_open', { url: 'file:///etc/passwd' })).text).toContain(
      'only http and https pages may be opened',
    );
    await callTool(client, 'browser_open', { url: `${origin}/hostile-script` });
    await callTool(client, 'browser_wait', { text: 'finished' });
    const status = await callTool(client, 'browser_read', { selector: '#status' });
    expect(JSON.parse(status.text).content).toBe(
      'finished: metadata refused, internal refused, socket refused, image refused',
    );
    expect(internal?.requests).toEqual([]);

    // A page showing a secret the config knows: the text comes back without it.
    await callTool(client, 'browser_open', { url: `${origin}/leaky` });
    const leaky = await callTool(client, 'browser_read', {});
    expect(leaky.text).toContain('key: ');
    expect(leaky.text).not.toContain(toolboxSecret);

    // The page is the connection's: when the client goes, the CLI ends and takes its Chromium with it.
    const cli = (client.transport as StdioClientTransport | undefined)?.pid ?? undefined;
    expect(cli).toBeTypeOf('number');
    const tree = descendantsOf(cli ?? 0);
    expect(tree.length, 'Chromium runs under the CLI').toBeGreaterThan(0);
    await client.close();
    await waitFor(
      () => [cli ?? 0, ...tree].every((pid) => !isAlive(pid)),
      60_000,
      'the CLI and its Chromium to end',
    );
  }, 240_000);
});
