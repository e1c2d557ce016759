import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { ApiHarness } from '../api/api-harness.js';
import { Harness } from '../helpers/harness.js';
import { ratchetMcpCommand, repoRoot } from './mcp-client.js';

const run = promisify(execFile);

let harness: Harness | undefined;
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  await harness?.close();
  harness = undefined;
});

/**
 * The MCP Inspector's CLI, a client we do not own, as a child process: its JSON answer. It reads its own
 * package.json through a path it checks relative to the working directory, so it runs from a directory one
 * level below a package.json (bin/).
 */
// biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
async function inspect(args: string[]): Promise<any> {
  const { stdout } = await run(join(repoRoot, 'node_modules/.bin/mcp-inspector-cli'), ['--cli', ...args], {
    cwd: join(repoRoot, 'bin'),
    timeout: 60_000,
  });
  return JSON.parse(stdout);
}

function toolCall(tool: string, toolArgs: string[]): string[] {
  return ['--method', 'tools/call', '--tool-name', tool, '--tool-arg', ...toolArgs];
}

const script: Script = {
  replies: [
    { text: 'calculating', tool_calls: [{ name: 'calculate', arguments: { expression: '17 * 23 + 5' } }] },
    { text: 'It is 396.' },
  ],
};

describe('the MCP Inspector CLI as an outside client', () => {
  it('lists the tools of `ratchet mcp`, submits a task through it and gets the result', async () => {
    harness = new Harness({ script, agent: { toolboxes: ['utils'] } });
    await harness.startWorker();
    // How MCP clients (Claude Desktop, Cursor, the Inspector) are told to start a stdio server.
    const servers = join(harness.dir, 'mcp-servers.json');
    writeFileSync(
      servers,
      JSON.stringify({ mcpServers: { ratchet: ratchetMcpCommand(harness.configPath) } }),
    );
    const server = ['--config', servers, '--server', 'ratchet'];

    const listed = await inspect([...server, '--method', 'tools/list']);
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toContain('submit_task');

    const submitted = await inspect([...server, ...toolCall('submit_task', ['input=What is 17 * 23 + 5?'])]);
    const runId: string = submitted.structuredContent.run_id;
    expect(runId).toMatch(/^run_/);
    const waited = await inspect([...server, ...toolCall('wait_run', [`run_id=${runId}`, 'timeout_s=30'])]);
    expect(waited.isError).toBeUndefined();
    expect(waited.structuredContent).toMatchObject({
      finished: true,
      run: { id: runId, status: 'completed', result: 'It is 396.' },
    });
  });

  it('submits a task to /mcp over HTTP with a bearer token and gets the result', async () => {
    api = await ApiHarness.start({ script, api: { tokens: ['inspector-token-0123456789'] } });
    const endpoint = [
      `${api.url}/mcp`,
      '--transport',
      'http',
      '--header',
      'Authorization: Bearer inspector-token-0123456789',
    ];
    const submitted = await inspect([
      ...endpoint,
      ...toolCall('submit_task', ['input=What is 17 * 23 + 5?']),
    ]);
    const runId: string = submitted.structuredContent.run_id;
    const waited = await inspect([...endpoint, ...toolCall('wait_run', [`run_id=${runId}`, 'timeout_s=30'])]);
    expect(waited.structuredContent.run).toMatchObject({ status: 'completed', result: 'It is 396.' });
    const text = JSON.parse(waited.content[0].text);
    expect(text.run.result).toBe('It is 396.');

    // Without the token, the inspector cannot connect.
    await expect(
      inspect([`${api.url}/mcp`, '--transport', 'http', '--method', 'tools/list']),
    ).rejects.toMatchObject({ code: 1 });
  });
});
