import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runnableSummaries } from '../api/index.js';
import { createLogger } from '../log/index.js';
import { createRatchetMcpServer } from '../mcp/server/index.js';
import type { ToolBox } from '../tools/index.js';
import { loadCliConfig } from './cli-config.js';
import type { ProcessIo } from './process-io.js';
import { openApiEngine } from './start-api.js';

export interface McpCommandOptions {
  config: string | undefined;
  toolboxes: readonly ToolBox[];
}

/**
 * `ratchet mcp`: Ratchet's MCP server on stdin/stdout, for an MCP client that starts it as a child process.
 * Like `ratchet api` it records, enqueues and reads; workers (`ratchet worker`, `ratchet dev`) run the steps.
 * stdout carries only MCP messages: logs go to stderr. Ends when the client closes stdin, or on a signal.
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
  const connection = openApiEngine({ loaded, toolboxes: options.toolboxes, logger, name: 'ratchet-mcp' });
  const server = createRatchetMcpServer({
    engine: connection.engine,
    agents: runnableSummaries(loaded.config),
    logger,
  });
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
    logger.info({ config: loaded.path }, 'MCP server on stdio');
    await ended;
  } finally {
    try {
      await server.close();
    } finally {
      await connection.close();
    }
  }
  return 0;
}
