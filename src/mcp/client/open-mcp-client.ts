import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { HttpMcpServerConfig, McpServerConfig, StdioMcpServerConfig } from '../../config/index.js';
import { ratchetVersion } from '../../version.js';

/** How this client introduces itself to servers. */
const clientInfo = { name: 'ratchet', version: ratchetVersion() };

export interface OpenedClient {
  client: Client;
  /** Which transport the connection uses (an HTTP server may only speak the older HTTP+SSE). */
  transport: 'stdio' | 'streamable_http' | 'sse';
  /** The server process of a stdio connection. */
  pid: number | undefined;
}

export interface OpenClientOptions {
  server: McpServerConfig;
  /** A relative `cwd` resolves against it. */
  configDir: string;
  /** Each chunk a stdio server writes to its stderr. */
  onStderr(chunk: string): void;
  /** Aborted when the worker shuts down: a connection still being opened is closed (its process ended). */
  signal: AbortSignal;
}

/**
 * Connects to a server and runs the MCP initialization, within the server's `connect_timeout_ms`. An HTTP
 * server that refuses the Streamable HTTP handshake with a 4xx is tried again over HTTP+SSE, as the MCP
 * specification's backwards-compatibility section asks of clients.
 */
export async function openMcpClient(options: OpenClientOptions): Promise<OpenedClient> {
  const { server } = options;
  if (server.transport === 'stdio') return openStdio(server, options);
  try {
    return await openHttp(
      server,
      'streamable_http',
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
      options.signal,
    );
  } catch (error) {
    if (!(error instanceof StreamableHTTPError && isClientError(error.code))) throw error;
    return openHttp(
      server,
      'sse',
      new SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
      options.signal,
    );
  }
}

async function openStdio(server: StdioMcpServerConfig, options: OpenClientOptions): Promise<OpenedClient> {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: server.env,
    ...(server.cwd === undefined ? {} : { cwd: resolve(options.configDir, server.cwd) }),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => options.onStderr(chunk.toString()));
  const client = await connectWithin(server.connect_timeout_ms, transport, options.signal);
  return { client, transport: 'stdio', pid: transport.pid ?? undefined };
}

async function openHttp(
  server: HttpMcpServerConfig,
  kind: 'streamable_http' | 'sse',
  transport: StreamableHTTPClientTransport | SSEClientTransport,
  signal: AbortSignal,
): Promise<OpenedClient> {
  const client = await connectWithin(server.connect_timeout_ms, transport, signal);
  return { client, transport: kind, pid: undefined };
}

/**
 * A client connected over `transport`, or an error after `timeoutMs` or once `signal` aborts: the timeout
 * covers starting the transport (spawning a process, opening an SSE stream) as well as the initialize
 * request. On failure the transport is closed, which ends a stdio server's process.
 */
async function connectWithin(timeoutMs: number, transport: Transport, signal: AbortSignal): Promise<Client> {
  // No capabilities: this client offers servers no sampling, elicitation or roots.
  const client = new Client(clientInfo, { capabilities: {} });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    onAbort = () => reject(new Error('the worker is shutting down'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([client.connect(transport, { timeout: timeoutMs }), timeout]);
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function isClientError(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500;
}
