import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';
import {
  callTool,
  connectClient,
  ratchetMcpCommand,
  ratchetMcpToolNames,
  rawInitializeRequest,
  repoRoot,
} from './mcp-client.js';

let harness: Harness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await harness?.close();
  harness = undefined;
});

/** The CLI knows the built-in toolboxes only: the agent under test uses `utils`. */
function startHarness(script: Script): Harness {
  harness = new Harness({ script, agent: { toolboxes: ['utils'] } });
  return harness;
}

const calculateScript: Script = {
  replies: [
    { text: 'calculating', tool_calls: [{ name: 'calculate', arguments: { expression: '17 * 23 + 5' } }] },
    // Slow enough that wait_run is waiting when the run completes.
    { text: 'It is 396.', delay_ms: 1500 },
  ],
};

describe('ratchet mcp (stdio)', () => {
  it('serves the tools to an SDK client that starts it; logs go to stderr, stdout carries only MCP', async () => {
    const h = startHarness(calculateScript);
    await h.startWorker();
    const transport = new StdioClientTransport({
      ...ratchetMcpCommand(h.configPath),
      cwd: repoRoot,
      env: { ...(process.env as Record<string, string>), RATCHET_LOG_LEVEL: 'info' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const protocolErrors: Error[] = [];
    client = await connectClient(transport);
    client.onerror = (error) => protocolErrors.push(error);

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(ratchetMcpToolNames);
    const submitted = await callTool(client, 'submit_task', { input: 'What is 17 × 23 + 5?' });
    expect(submitted.isError).toBe(false);
    const progress: Progress[] = [];
    const waited = await callTool(
      client,
      'wait_run',
      { run_id: submitted.value.run_id, timeout_s: 30 },
      { onprogress: (update) => progress.push(update) },
    );
    expect(waited.value).toMatchObject({
      finished: true,
      run: { status: 'completed', result: 'It is 396.' },
    });
    // The events after the wait began arrived as progress: the final reply and the run's end.
    const messages = progress.map((update) => update.message);
    expect(messages).toContain('agent: assistant message added');
    expect(messages).toContain('agent: run completed');
    const got = await callTool(client, 'get_run', { run_id: submitted.value.run_id });
    expect(got.value.iterations).toBe(2);
    const unknown = await callTool(client, 'get_run', { run_id: 'run_0000000000000000_0000000000' });
    expect(unknown.text).toBe('not_found: unknown run run_0000000000000000_0000000000');

    expect(protocolErrors).toEqual([]);
    expect(stderr).toMatch(/"msg":"MCP server on stdio"/);
  });

  it('answers JSON-RPC lines only on stdout, and exits 0 when the client closes stdin', async () => {
    const h = startHarness({ default: { text: 'ok' } });
    const { command, args } = ratchetMcpCommand(h.configPath);
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...process.env, RATCHET_LOG_LEVEL: 'debug' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr.resume();
    const lines = createInterface({ input: child.stdout });
    const received: string[] = [];
    const listed = new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        received.push(line);
        if (line.includes('"id":2')) resolve();
      });
    });
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send(rawInitializeRequest);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_agents', arguments: {} } });
    await listed;
    child.stdin.end();
    expect(await exited).toBe(0);
    const messages = received.map((line) => JSON.parse(line));
    expect(messages.map((message) => message.jsonrpc)).toEqual(['2.0', '2.0']);
    expect(messages[0].result.serverInfo.name).toBe('ratchet');
    expect(messages[1].result.structuredContent.agents[0].name).toBe('agent');
  });
});
