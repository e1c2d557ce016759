import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runnableSummaries } from '../api/index.js';
import type { LoadedConfig } from '../config/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { createRatchetMcpServer, createToolboxMcpServer, servedToolboxes } from '../mcp/server/index.js';
import { closeRedis, createRedis, redisTargetOf } from '../redis/connection.js';
import { redisMemoryOnOwnConnection } from '../redis/memory-store.js';
import type { ToolBox } from '../tools/index.js';
import { loadCliConfig } from './cli-config.js';
import { CliError } from './cli-error.js';
import type { ProcessIo } from './process-io.js';
import { openApiEngine } from './start-api.js';

export interface McpCommandOptions {
  config: string | undefined;
  toolboxes: readonly ToolBox[];
  /** `--toolboxes`: serve the tools of these toolboxes instead of Ratchet's run operations. */
  serve?: readonly string[] | undefined;
  /** `--require-approval`: tools whose calls a person approves first (an MCP elicitation). */
  requireApproval?: readonly string[] | undefined;
}

/**
 * `ratchet mcp`: Ratchet's MCP server on stdin/stdout, for an MCP client that starts it as a child process.
 * Like `ratchet api` it records, enqueues and reads; workers (`ratchet worker`, `ratchet dev`) run the steps.
 * With `--toolboxes` it serves the tools of those toolboxes instead, run in this process with the config's
 * `tools` settings. stdout carries only MCP messages: logs go to stderr. Ends when the client closes stdin,
 * or on a signal.
 */
export async function mcpCommand(options: McpCommandOptions, io: ProcessIo): Promise<number> {
  const loaded = loadCliConfig(options.config, options.toolboxes);
  const logger = createLogger({
    name: 'ratchet-mcp',
    level: io.env.RATCHET_LOG_LEVEL ?? 'warn',
    destination: io.stderr,
    format: loaded.config.log.format,
    env: io.env,
  });
  if (options.serve !== undefined) return serveToolboxes(options, options.serve, loaded, logger, io);
  const connection = openApiEngine({ loaded, toolboxes: options.toolboxes, logger, name: 'ratchet-mcp' });
  const server = createRatchetMcpServer({
    engine: connection.engine,
    agents: runnableSummaries(loaded.config),
    logger,
  });
  try {
    await serveOnStdio(server, io, logger, loaded.path);
  } finally {
    await connection.close();
  }
  return 0;
}

/** `ratchet mcp --toolboxes NAMES`: a Redis connection only once a tool needs one (the memory toolbox). */
async function serveToolboxes(
  options: McpCommandOptions,
  names: readonly string[],
  loaded: LoadedConfig,
  logger: Logger,
  io: ProcessIo,
): Promise<number> {
  let served: ReturnType<typeof servedToolboxes>;
  try {
    served = servedToolboxes({
      names,
      config: loaded.config,
      configDir: loaded.configDir,
      codeToolboxes: options.toolboxes,
      requiresApproval: options.requireApproval,
      source: '--toolboxes',
    });
  } catch (error) {
    throw new CliError(`mcp: ${(error as Error).message}`, 2);
  }
  const { config } = loaded;
  const redis = createRedis({
    ...redisTargetOf(config.redis),
    logger,
    name: 'ratchet-mcp-toolboxes',
    lazy: true,
    maxRetriesPerRequest: 1,
    commandTimeoutMs: config.api.redis_timeout_ms,
  });
  const server = createToolboxMcpServer({
    toolboxes: served.toolboxes,
    approvalTools: served.approvalTools,
    memory: redisMemoryOnOwnConnection(redis, { prefix: config.redis.prefix, shards: config.redis.shards }),
    logger,
  });
  try {
    await serveOnStdio(server, io, logger, loaded.path);
  } finally {
    try {
      await served.close();
    } finally {
      await closeRedis(redis);
    }
  }
  return 0;
}

/** Connects the server to stdin/stdout and resolves once the client is gone (or a signal came), closed. */
async function serveOnStdio(
  server: McpServer | Server,
  io: ProcessIo,
  logger: Logger,
  configPath: string,
): Promise<void> {
  const transport = new StdioServerTransport(io.stdin as Readable, io.stdout as Writable);
  const ended = new Promise<void>((resolve) => {
    const removeInterrupt = io.interrupts.on(done);
    const removeTermination = io.terminations.on(done);
    io.stdin.once('end', done);
    transport.onclose = done;
    function done() {
      removeInterrupt();
      removeTermination();
      resolve();
    }
  });
  try {
    await server.connect(transport);
    logger.info({ config: configPath }, 'MCP server on stdio');
    await ended;
  } finally {
    await server.close();
  }
}
