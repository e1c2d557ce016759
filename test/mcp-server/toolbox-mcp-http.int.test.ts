import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiProcess, startApi } from '../../src/cli/start-api.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/index.js';
import { toolboxMcpPath } from '../../src/mcp/server/index.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';
import { html, startPageServer } from '../helpers/browser-pages.js';
import { callTool } from './mcp-client.js';
import { ToolboxWorld, toolboxSecret } from './toolbox-world.js';

/**
 * `api.mcp_toolboxes`: the toolbox MCP server at /v1/mcp/toolboxes of a real API process (startApi, as
 * `ratchet api` runs it), over Streamable HTTP, behind the API's tokens: operators only.
 */

const operator = 'operator-token-toolboxes-01';
const tenant = 'tenant-token-toolboxes-0123';

let world: ToolboxWorld | undefined;
let api: ApiProcess | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await api?.close();
  api = undefined;
  await world?.close();
  world = undefined;
});

async function start(
  mcpToolboxes: Record<string, unknown>,
  tools?: Record<string, unknown>,
  before?: (world: ToolboxWorld) => void,
): Promise<ApiProcess> {
  world = new ToolboxWorld({
    api: { tokens: [operator, { token: tenant, tenant: 'acme' }], mcp_toolboxes: mcpToolboxes },
    ...(tools ? { tools } : {}),
  });
  before?.(world);
  const loaded = loadConfig(world.configPath, { env: world.env, knownToolboxes: knownToolboxes([]) });
  api = await startApi({ loaded, toolboxes: [], logger: silentLogger(), host: '127.0.0.1', port: 0 });
  return api;
}

async function connect(url: string, token: string | undefined): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}${toolboxMcpPath}`), {
    ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  });
  const client = new Client({ name: 'toolbox-http-test', version: '1' });
  clients.push(client);
  await client.connect(transport);
  return client;
}

describe('/v1/mcp/toolboxes (api.mcp_toolboxes)', () => {
  it('serves the toolboxes to an operator token, confined and redacted; a tenant token gets 403, none 401', async () => {
    const { url } = await start({
      enabled: true,
      toolboxes: ['filesystem', 'http'],
      requires_approval: ['http_request'],
    });
    const client = await connect(url, operator);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'http_request']));
    expect(names).not.toContain('run_command');

    const read = await callTool(client, 'read_file', { path: 'leak.txt' });
    expect(read.isError).toBe(false);
    expect(read.text).toContain('the key is');
    expect(read.text).not.toContain(toolboxSecret);
    const escaped = await callTool(client, 'read_file', { path: '../outside.txt' });
    expect(escaped.isError).toBe(true);
    expect(escaped.text).not.toContain('OUTSIDE-MARKER-CONTENT');

    // Over stateless HTTP no client can be asked: tools needing approval are refused, by the config's list
    // (http_request) and by an agent's requires_approval (write_file).
    for (const [tool, args] of [
      ['http_request', { url: 'http://169.254.169.254/latest/meta-data/' }],
      ['write_file', { path: 'new.txt', content: 'x' }],
    ] as const) {
      const refused = await callTool(client, tool, args);
      expect(refused.isError, tool).toBe(true);
      expect(refused.text).toContain("needs a person's approval");
    }
    expect(existsSync(join(world?.workspace ?? '', 'new.txt'))).toBe(false);

    const tenantAnswer = await fetch(`${url}${toolboxMcpPath}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(tenantAnswer.status).toBe(403);
    expect(JSON.stringify(await tenantAnswer.json())).toContain('use an operator token');
    await expect(connect(url, tenant)).rejects.toThrow();
    await expect(connect(url, undefined)).rejects.toThrow(/401|unauthorized|Bearer/i);
  });

  it('serves git, search and the browser as over stdio: confined, redacted, a page per request', async () => {
    const site = await startPageServer((request, response) =>
      html(
        response,
        request.url === '/leaky'
          ? `<!doctype html><title>Leaky</title><p>key: ${toolboxSecret}</p>`
          : '<!doctype html><title>Home</title><p id="hello">hello over HTTP</p>',
      ),
    );
    try {
      const { url } = await start(
        { enabled: true, toolboxes: ['git', 'search', 'browser'] },
        { browser: { private_hosts: ['127.0.0.1'], action_timeout_ms: 20_000 } },
        (w) => execFileSync('git', ['init', '-q', w.workspace]),
      );
      const client = await connect(url, operator);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['git_status', 'grep', 'glob', 'browser_open']));

      expect((await callTool(client, 'git_status', {})).text).toContain('?? leak.txt');
      const added = await callTool(client, 'git_add', { paths: ['leak.txt'] });
      expect(added.isError, added.text).toBe(false);
      const staged = await callTool(client, 'git_diff', { staged: true });
      expect(staged.text).toContain('+the key is');
      expect(staged.text).not.toContain(toolboxSecret);
      const escapedGit = await callTool(client, 'git_add', { paths: ['../outside.txt'] });
      expect(escapedGit.isError).toBe(true);

      const grepped = await callTool(client, 'grep', { pattern: 'the key is' });
      expect(grepped.text).toContain('leak.txt');
      expect(grepped.text).not.toContain(toolboxSecret);
      const escapedSearch = await callTool(client, 'grep', { pattern: 'OUTSIDE', path: '..' });
      expect(escapedSearch.isError).toBe(true);
      expect(escapedSearch.text).not.toContain('OUTSIDE-MARKER-CONTENT');

      const opened = await callTool(client, 'browser_open', { url: `${site.origin}/` });
      expect(opened.isError, opened.text).toBe(false);
      expect(JSON.parse(opened.text)).toMatchObject({ title: 'Home' });
      const metadata = await callTool(client, 'browser_open', {
        url: 'http://169.254.169.254/latest/meta-data/',
      });
      expect(metadata.isError).toBe(true);
      expect(metadata.text).toContain('link-local address');
      const leaky = await callTool(client, 'browser_open', { url: `${site.origin}/leaky` });
      expect(leaky.isError, leaky.text).toBe(false);
      expect(leaky.text).not.toContain(toolboxSecret);
      // Each request is a scope of its own (decision 0041): the page opened by the last call is gone, so a
      // tool that acts on it is refused, saying why and what keeps a page, rather than run on a blank page.
      for (const [tool, args] of [
        ['browser_read', {}],
        ['browser_click', { selector: '#hello' }],
        ['browser_screenshot', {}],
      ] as const) {
        const refused = await callTool(client, tool, args);
        expect(refused.isError, refused.text).toBe(true);
        expect(refused.text).toContain('no page is kept between calls');
        expect(refused.text).toContain('ratchet mcp --toolboxes browser');
      }
    } finally {
      await site.close();
    }
  });

  it('is absent unless enabled, and a config naming a session toolbox fails at start', async () => {
    const { url } = await start({ enabled: false });
    const answer = await fetch(`${url}${toolboxMcpPath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(404);
    await api?.close();
    api = undefined;
    await world?.close();
    world = undefined;
    // The config's own check finds it, before the API builds anything (decision 0049).
    await expect(start({ enabled: true, toolboxes: ['tasks'] })).rejects.toThrow(
      /api\.mcp_toolboxes\.toolboxes\[0\]: "tasks" works on a session's shared data/,
    );
  });
});
