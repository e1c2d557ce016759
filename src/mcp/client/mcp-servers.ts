import type { McpServerConfig } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import type { McpToolListings, ToolBox } from '../../tools/index.js';
import { McpConnection } from './mcp-connection.js';

export interface McpServersOptions {
  servers: readonly McpServerConfig[];
  /** Relative `cwd`s of stdio servers resolve against it. */
  configDir: string;
  logger: Logger;
  /** Backoff of background reconnections (tests shorten it). */
  reconnectDelayMs?: { initial: number; max: number };
  /** Tool lists shared between workers, for servers down when a worker starts. */
  listings?: McpToolListings;
}

/** A worker process's connections to the config's MCP servers: one toolbox per server, named after it. */
export class McpServers {
  readonly connections: readonly McpConnection[];

  constructor(options: McpServersOptions) {
    this.connections = options.servers.map(
      (server) =>
        new McpConnection({
          server,
          configDir: options.configDir,
          logger: options.logger,
          ...(options.reconnectDelayMs ? { reconnectDelayMs: options.reconnectDelayMs } : {}),
          ...(options.listings ? { listings: options.listings } : {}),
        }),
    );
  }

  get toolboxes(): ToolBox[] {
    return this.connections.map((connection) => connection.toolbox);
  }

  connection(name: string): McpConnection | undefined {
    return this.connections.find((connection) => connection.name === name);
  }

  /** Connects to every server at once; one that is down does not hold the others or fail the start. */
  async start(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.start()));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.connections.map((connection) => connection.close()));
  }
}
