import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../../config/index.js';
import { untilAborted } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { createRedactor, type Redactor } from '../../secrets/index.js';
import {
  type AnyTool,
  type JsonValue,
  type ListedTool,
  listedToolSchema,
  type McpToolListings,
  type ToolBox,
  type ToolContext,
} from '../../tools/index.js';
import { toolOutputOfMcpResult } from './mcp-result.js';
import { mcpToolOf } from './mcp-tool.js';
import { type OpenedClient, openMcpClient } from './open-mcp-client.js';

export interface McpConnectionOptions {
  server: McpServerConfig;
  configDir: string;
  logger: Logger;
  /** Backoff between background reconnection attempts after a failure or a lost connection. */
  reconnectDelayMs?: { initial: number; max: number };
  /** Where tool lists are shared between workers (see McpToolListings). */
  listings?: McpToolListings;
}

interface Session extends OpenedClient {
  /** Set once the connection is gone: late callbacks of a dead session are ignored. */
  ended: boolean;
}

const stderrTailLength = 2_000;
const maxToolPages = 100;

/**
 * A worker's connection to one MCP server, and the toolbox of its tools. Opened at worker start; when it
 * fails or is lost it is reopened in the background (with backoff) and on the next call, and the toolbox
 * keeps the tools last listed meanwhile, so a call of a tool of a server that is down is an error result
 * the model reads, never a failed step. Closed on shutdown.
 */
export class McpConnection {
  readonly toolbox: ToolBox;
  private tools: AnyTool[] = [];
  private session: Session | undefined;
  private connecting: Promise<Session> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** Aborted by close(): ends a connection still being opened (and its stdio server's process). */
  private readonly closing = new AbortController();
  private stderrTail = '';
  private readonly redact: Redactor;
  private readonly logger: Logger;

  constructor(private readonly options: McpConnectionOptions) {
    const connection = this;
    this.toolbox = {
      name: options.server.name,
      dynamic: true,
      get tools() {
        return connection.tools;
      },
    };
    this.logger = options.logger.child({ mcp_server: options.server.name });
    const { server } = options;
    this.redact = createRedactor(Object.values(server.transport === 'stdio' ? server.env : server.headers));
  }

  get name(): string {
    return this.options.server.name;
  }

  /** The process of a stdio server while connected. */
  get pid(): number | undefined {
    return this.session?.pid;
  }

  get connected(): boolean {
    return this.session !== undefined;
  }

  /** Connects once; a server that cannot be reached is logged and retried in the background. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch {
      // connect() logged it and scheduled the retry: a server that is down must not stop the worker. Its tools
      // as some worker last listed them are offered meanwhile (their calls fail until it is back).
      const listed = await this.options.listings?.load(this.name).catch(() => undefined);
      if (listed && this.tools.length === 0 && !this.session) {
        this.tools = listed.map((entry) => this.toolOf(entry));
        this.logger.info(
          { tools: listed.map((entry) => entry.name) },
          'MCP server down: its last listed tools are offered',
        );
      }
    }
  }

  /**
   * Ends the session, and a connection still being opened: once this resolves, no process of a stdio server
   * of this connection is left running.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.closing.abort();
    const session = this.session;
    this.session = undefined;
    if (session) await this.endSession(session);
    // open() ends what it opened once it sees the connection closed.
    await this.connecting?.catch(() => undefined);
  }

  /** Calls a tool; resolves with its output, or throws an error whose message the model will read. */
  async callTool(
    name: string,
    input: Record<string, unknown>,
    context: ToolContext,
  ): Promise<string | JsonValue> {
    // An isError result throws here too, as the result's own text: the connection is fine.
    return toolOutputOfMcpResult(await this.request(name, input, context));
  }

  private async request(
    name: string,
    input: Record<string, unknown>,
    context: ToolContext,
  ): Promise<unknown> {
    const session = await this.sessionFor(context.signal);
    try {
      return await this.send(session, name, input, context);
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (!isSessionExpired(error)) throw this.callError(session, error);
      // The server no longer knows the session (it restarted): it refused the call unseen, so the call is
      // sent once more over a new session.
      this.drop(session, 'the server ended the session');
      const next = await this.sessionFor(context.signal);
      try {
        return await this.send(next, name, input, context);
      } catch (retryError) {
        if (context.signal.aborted) throw retryError;
        throw this.callError(next, retryError);
      }
    }
  }

  private send(
    session: Session,
    name: string,
    input: Record<string, unknown>,
    context: ToolContext,
  ): Promise<unknown> {
    return session.client.callTool(
      // The idempotency key lets a server that supports it dedupe a call re-run after a crash.
      { name, arguments: input, _meta: { 'ratchet/idempotency-key': context.idempotencyKey } },
      undefined,
      { signal: context.signal, timeout: this.options.server.timeout_ms },
    );
  }

  /** The error the model reads for a failed call; a connection that failed is dropped to be reopened. */
  private callError(session: Session, error: unknown): Error {
    const { name, timeout_ms } = this.options.server;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return new Error(`MCP server "${name}" did not answer within ${timeout_ms} ms`);
    }
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
      // The server answered with a JSON-RPC error (unknown tool, invalid arguments …): the connection is fine.
      return new Error(this.redact(error.message));
    }
    if (!(error instanceof McpError)) {
      // A transport failure (connection refused, HTTP error): whatever state the session is in, reopen it.
      this.drop(session, describe(error));
    }
    return new Error(`MCP server "${name}" is unavailable: ${this.redact(describe(error))}`);
  }

  /** The open session, or a new one; fails when the server cannot be reached or the call is aborted. */
  private async sessionFor(signal: AbortSignal): Promise<Session> {
    if (this.closed) throw new Error(`MCP server "${this.name}" is unavailable: the worker is shutting down`);
    if (this.session) return this.session;
    try {
      // The connection is shared: the promise settles for its other users.
      return await untilAborted(this.connect(), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new Error(`MCP server "${this.name}" is unavailable: ${describe(error)}`);
    }
  }

  /** One connection attempt at a time; concurrent callers share it. Errors are redacted and logged. */
  private connect(): Promise<Session> {
    if (this.session) return Promise.resolve(this.session);
    if (!this.connecting) {
      const attempt = this.open().finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
      this.connecting = attempt;
    }
    return this.connecting;
  }

  private async open(): Promise<Session> {
    clearTimeout(this.reconnectTimer);
    let session: Session | undefined;
    try {
      const opened = await openMcpClient({
        server: this.options.server,
        configDir: this.options.configDir,
        onStderr: (chunk) => this.keepStderr(chunk),
        signal: this.closing.signal,
      });
      session = { ...opened, ended: false };
      const current = session;
      current.client.onclose = () => this.drop(current, 'the connection closed');
      current.client.onerror = (error) =>
        this.logger.debug({ error: this.redact(describe(error)) }, 'MCP transport error');
      current.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.refreshTools(current).catch((error: unknown) =>
          this.logger.warn({ error: this.redact(describe(error)) }, 'MCP tool list refresh failed'),
        );
      });
      this.tools = await this.listTools(current);
      if (this.closed) throw new Error('the worker is shutting down');
    } catch (error) {
      if (session) await this.endSession(session);
      const message = this.redact(describe(error));
      if (this.closed) this.logger.info('MCP server connection given up: the worker is shutting down');
      else this.logger.warn({ error: message, stderr: this.stderrForLog() }, 'MCP server connection failed');
      this.scheduleReconnect();
      throw new Error(message);
    }
    this.session = session;
    this.failures = 0;
    this.logger.info(
      { transport: session.transport, tools: this.tools.map((tool) => tool.name) },
      'MCP server connected',
    );
    return session;
  }

  private async refreshTools(session: Session): Promise<void> {
    const tools = await this.listTools(session);
    if (session === this.session) this.tools = tools;
  }

  private toolOf(entry: ListedTool): AnyTool {
    return mcpToolOf(entry, (name, input, context) => this.callTool(name, input, context));
  }

  private async listTools(session: Session): Promise<AnyTool[]> {
    const tools: AnyTool[] = [];
    const listedTools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < maxToolPages; page += 1) {
      const result = await session.client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: this.options.server.connect_timeout_ms,
      });
      for (const entry of result.tools) {
        const listed = listedToolSchema.safeParse(entry);
        if (!listed.success) {
          this.logger.warn({ tool: (entry as { name?: unknown }).name }, 'MCP tool skipped: invalid listing');
          continue;
        }
        listedTools.push(listed.data);
        tools.push(this.toolOf(listed.data));
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    await this.options.listings
      ?.save(this.name, listedTools)
      .catch((error: unknown) => this.logger.warn({ error: describe(error) }, 'MCP tool list not shared'));
    return tools;
  }

  /** Forgets a session that failed or closed (once) and schedules a reconnection. */
  private drop(session: Session, reason: string): void {
    if (session.ended) return;
    if (this.session === session) this.session = undefined;
    void this.endSession(session);
    if (this.closed) return;
    this.logger.warn({ reason, stderr: this.stderrForLog() }, 'MCP server connection lost');
    this.scheduleReconnect();
  }

  private async endSession(session: Session): Promise<void> {
    if (session.ended) return;
    session.ended = true;
    await session.client.close().catch(() => undefined);
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const { initial, max } = this.options.reconnectDelayMs ?? { initial: 1_000, max: 30_000 };
    const delay = Math.min(max, initial * 2 ** this.failures);
    this.failures += 1;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.connect().catch(() => undefined);
    }, delay);
    this.reconnectTimer.unref();
  }

  private keepStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk).slice(-stderrTailLength);
  }

  /** The server's last stderr output, without the configured secrets (it may print its environment). */
  private stderrForLog(): string | undefined {
    const tail = this.stderrTail.trim();
    this.stderrTail = '';
    return tail === '' ? undefined : this.redact(tail);
  }
}

/** A Streamable HTTP server answers 404 to a session id it does not know (MCP spec: start a new session). */
function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  // fetch() reports "fetch failed" and puts the reason (ECONNREFUSED …) in its cause.
  return cause instanceof Error && cause.message !== ''
    ? `${error.message} (${cause.message})`
    : error.message;
}
