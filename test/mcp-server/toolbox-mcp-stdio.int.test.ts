import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { maxToolboxArgumentChars } from '../../src/mcp/server/index.js';
import { callTool, repoRoot } from './mcp-client.js';
import { ToolboxWorld, toolboxSecret } from './toolbox-world.js';

/**
 * `ratchet mcp --toolboxes …` (the compiled CLI, started by the SDK's stdio client as an MCP client starts
 * it): the toolboxes' tools, confined as when an agent calls them, with a caller that is an attacker.
 */

let world: ToolboxWorld | undefined;
const clients: Client[] = [];
let target: Server | undefined;
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await new Promise((resolve) => (target ? target.close(resolve) : resolve(undefined)));
  target = undefined;
  await world?.close();
  world = undefined;
});

const connect = (
  w: ToolboxWorld,
  options: { toolboxes: string; elicit?: (message: string) => ElicitResult },
): Promise<Client> => w.connect(clients, options);

// Each test starts the CLI (one or two clients): generous limits on a loaded machine.
describe('ratchet mcp --toolboxes (stdio)', () => {
  it('serves the tools of the toolboxes named, confined to the workspace, with secrets redacted', async () => {
    world = new ToolboxWorld();
    const client = await connect(world, { toolboxes: 'filesystem,exec,http,memory' });
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'run_command', 'http_request', 'memory_write']),
    );
    // Only the toolboxes named: not the session's, not delegation.
    expect(names).not.toContain('set_state');
    expect(names).not.toContain('delegate');
    expect(tools.find((tool) => tool.name === 'read_file')?.inputSchema.type).toBe('object');

    const read = await callTool(client, 'read_file', { path: 'notes.txt' });
    expect(read.isError).toBe(false);
    expect(read.text).toContain('the workspace file');

    // A secret the config knows never comes back, whatever file holds it.
    const leaked = await callTool(client, 'read_file', { path: 'leak.txt' });
    expect(leaked.text).toContain('the key is');
    expect(leaked.text).not.toContain(toolboxSecret);

    // Path escapes: relative, absolute, through the exec sandbox.
    for (const path of ['../outside.txt', join(world.dir, 'outside.txt'), '../../../../etc/passwd']) {
      const escaped = await callTool(client, 'read_file', { path });
      expect(escaped.isError, path).toBe(true);
      expect(escaped.text).not.toContain('OUTSIDE-MARKER-CONTENT');
    }
    const sandboxed = await callTool(client, 'run_command', {
      command: 'cat',
      args: [join(world.dir, 'outside.txt')],
    });
    expect(sandboxed.text).not.toContain('OUTSIDE-MARKER-CONTENT');
    const echoed = await callTool(client, 'run_command', { command: 'echo', args: ['sandboxed hello'] });
    expect(echoed.isError).toBe(false);
    expect(echoed.text).toContain('sandboxed hello');
    const notAllowed = await callTool(client, 'run_command', { command: 'rm', args: ['-rf', '.'] });
    expect(notAllowed.isError).toBe(true);
    expect(existsSync(join(world.workspace, 'notes.txt'))).toBe(true);

    // SSRF: loopback (a server that would answer) and the cloud metadata address are refused.
    target = createServer((_request, response) => response.end('internal data'));
    await new Promise<void>((resolve) => target?.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as { port: number }).port;
    for (const url of [`http://127.0.0.1:${port}/`, 'http://169.254.169.254/latest/meta-data/']) {
      const fetched = await callTool(client, 'http_request', { url });
      expect(fetched.isError, url).toBe(true);
      expect(fetched.text).not.toContain('internal data');
    }

    // Arguments over the bound, and arguments that do not fit the schema, are refused with the field named.
    const oversized = await callTool(client, 'memory_write', {
      content: 'x'.repeat(maxToolboxArgumentChars + 1),
    });
    expect(oversized.isError).toBe(true);
    expect(oversized.text).toContain(`over the limit of ${maxToolboxArgumentChars}`);
    const badInput = await callTool(client, 'read_file', { path: 7 });
    expect(badInput.isError).toBe(true);
    expect(badInput.text).toContain('path');
    const unknown = await callTool(client, 'set_state', { key: 'a', value: 1 });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('unknown tool "set_state"');

    // Memory lives in Redis, as an agent's does: written in one call, read in the next.
    const written = await callTool(client, 'memory_write', { name: 'fact', content: 'the sky is blue' });
    expect(written.isError, written.text).toBe(false);
    const remembered = await callTool(client, 'memory_read', {});
    expect(remembered.text).toContain('the sky is blue');
  }, 180_000);

  it('refuses a tool that needs approval when the client cannot be asked; asks one that can (elicitation)', async () => {
    world = new ToolboxWorld();
    const target = join(world.workspace, 'approved.txt');
    const plain = await connect(world, { toolboxes: 'filesystem' });
    const refused = await callTool(plain, 'write_file', { path: 'approved.txt', content: 'one' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("needs a person's approval");
    expect(existsSync(target)).toBe(false);

    const asked: string[] = [];
    let decision = 'reject';
    const asking = await connect(world, {
      toolboxes: 'filesystem',
      elicit: (message) => {
        asked.push(message);
        return { action: 'accept', content: { decision, reason: 'not now' } };
      },
    });
    const rejected = await callTool(asking, 'write_file', { path: 'approved.txt', content: 'two' });
    expect(rejected.isError).toBe(true);
    expect(rejected.text).toContain('was not approved: not now');
    expect(existsSync(target)).toBe(false);
    expect(asked[0]).toContain('write_file');
    expect(asked[0]).toContain('approved.txt');

    decision = 'approve';
    const approved = await callTool(asking, 'write_file', { path: 'approved.txt', content: 'three' });
    expect(approved.isError, approved.text).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('three');
    // A tool that needs no approval is not asked about.
    await callTool(asking, 'read_file', { path: 'approved.txt' });
    expect(asked).toHaveLength(2);
  }, 180_000);

  it('refuses a session toolbox and an unknown name at start, naming what can be served', async () => {
    world = new ToolboxWorld();
    const { execFile } = await import('node:child_process');
    const started = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          join(repoRoot, 'bin/ratchet.mjs'),
          'mcp',
          '--config',
          world?.configPath ?? '',
          '--toolboxes',
          'state,filesytem',
        ],
        { env: world?.env, timeout: 60_000 },
        (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }),
      );
    });
    expect(started.code).toBe(2);
    expect(started.stderr).toContain('"state" works on a session\'s shared data');
    expect(started.stderr).toContain('unknown toolbox "filesytem" (did you mean "filesystem"?)');
    expect(started.stderr).toContain('toolboxes that can be served: utils, filesystem');
  }, 180_000);
});
