import { redactUrl } from '../config/index.js';
import { createLogger } from '../log/index.js';
import type { ToolBox } from '../tools/index.js';
import { loadCliConfig } from './cli-config.js';
import { startDevStack } from './dev-stack.js';
import type { ProcessIo } from './process-io.js';
import { startApi } from './start-api.js';

export interface ServerCommandOptions {
  config: string | undefined;
  port: number | undefined;
  toolboxes: readonly ToolBox[];
}

/** `ratchet dev`: Redis (started when none answers), worker and API in one process until Ctrl-C. */
export async function devCommand(options: ServerCommandOptions, io: ProcessIo): Promise<number> {
  const loaded = loadCliConfig(options.config, options.toolboxes);
  const { config } = loaded;
  const logger = createLogger({
    name: 'ratchet-dev',
    level: io.env.RATCHET_LOG_LEVEL ?? 'warn',
    format: config.log.format,
    env: io.env,
  });
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const stopped = untilSignal(io);
  const stack = await startDevStack({
    loaded,
    toolboxes: options.toolboxes,
    logger,
    host: config.api.host,
    port: options.port ?? config.api.port,
    say,
  });
  say(
    `Ratchet dev: API on ${stack.url} (docs ${stack.url}/docs), worker running, Redis ${redactUrl(stack.redis.url)}`,
  );
  say(`console: ${stack.url}/console`);
  say(`config ${loaded.path}`);
  say(`try:  ${io.invocation} run --url ${stack.url} "What is 17 × 23 + 5?"`);
  say('Ctrl-C stops.');
  await stopped;
  say('stopping…');
  await stack.close();
  return 0;
}

/** `ratchet api`: the HTTP API until SIGTERM/SIGINT (workers run as their own processes). */
export async function apiCommand(options: ServerCommandOptions, io: ProcessIo): Promise<number> {
  const loaded = loadCliConfig(options.config, options.toolboxes);
  const logger = createLogger({ name: 'ratchet-api', format: loaded.config.log.format, env: io.env });
  const stopped = untilSignal(io);
  const api = await startApi({
    loaded,
    toolboxes: options.toolboxes,
    logger,
    host: loaded.config.api.host,
    port: options.port ?? loaded.config.api.port,
  });
  logger.info({ url: api.url, config: loaded.path }, 'api listening');
  await stopped;
  logger.info('stopping api');
  await api.close();
  return 0;
}

/**
 * Resolves on the first SIGINT or SIGTERM. Registered before anything starts: a signal during startup stops
 * the process cleanly once it has started (a redis-server started here is stopped too).
 */
function untilSignal(io: ProcessIo): Promise<void> {
  return new Promise((resolve) => {
    const removeInterrupt = io.interrupts.on(done);
    const removeTermination = io.terminations.on(done);
    function done() {
      removeInterrupt();
      removeTermination();
      resolve();
    }
  });
}
