import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';

/** An SDK client connected to Ratchet's MCP server; closed by `close()`. */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'ratchet-test', version: '1' });
  await client.connect(transport);
  return client;
}

export function httpTransport(baseUrl: string, token?: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  });
}

export interface ToolOutcome {
  isError: boolean;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  value: any;
}

/** Calls a tool; its text and structured content, and whether it is an error. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { onprogress?: (progress: Progress) => void } = {},
): Promise<ToolOutcome> {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: 60_000,
    ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
  });
  const content = result.content as { type: string; text?: string }[];
  return {
    isError: result.isError === true,
    text: content.map((part) => part.text ?? '').join(''),
    value: result.structuredContent,
  };
}

export const repoRoot = resolve(import.meta.dirname, '../..');

/** `ratchet mcp --config <file>`, as an MCP client starts it. */
export function ratchetMcpCommand(configPath: string): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [join(repoRoot, 'bin/ratchet.mjs'), 'mcp', '--config', configPath],
  };
}

/** The tools Ratchet's MCP server offers, sorted by name. */
export const ratchetMcpToolNames = [
  'cancel_run',
  'fork_run',
  'get_run',
  'get_run_steps',
  'get_run_tree',
  'get_session_state',
  'list_agents',
  'list_pending_questions',
  'list_runs',
  'list_session_notes',
  'list_session_tasks',
  'list_sessions',
  'respond',
  'retry_run',
  'send_event',
  'signal_run',
  'submit_task',
  'wait_run',
];

/** A raw JSON-RPC `initialize` request, for tests that speak the wire format without the SDK client. */
export const rawInitializeRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
