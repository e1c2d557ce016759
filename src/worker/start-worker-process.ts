import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { createLogger } from '../log/index.js';
import { knownToolboxes } from '../tools/builtin/index.js';
import type { ToolBox } from '../tools/index.js';
import { RatchetWorker } from './ratchet-worker.js';

export interface WorkerProcessOptions {
  argv: string[];
  /** Toolboxes registered from code, beside the built-in ones (which the config's `tools` section sets up). */
  toolboxes: readonly ToolBox[];
}

/**
 * Runs a worker until SIGTERM/SIGINT: stops taking jobs, finishes or hands back in-flight steps within the
 * configured deadline, and exits 0. A config that does not load is printed with every problem; exit 2.
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<RatchetWorker> {
  const { values } = parseArgs({
    args: options.argv,
    options: { config: { type: 'string', short: 'c' }, concurrency: { type: 'string' } },
    allowPositionals: false,
  });
  const configPath = values.config ?? process.env.RATCHET_CONFIG ?? 'config/demo.yaml';
  const logger = createLogger({ name: 'ratchet-worker' });
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(configPath, { knownToolboxes: knownToolboxes(options.toolboxes) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    process.stderr.write(
      `--concurrency: must be a whole number of at least 1 (got "${values.concurrency}")\n`,
    );
    process.exit(2);
  }
  const worker = new RatchetWorker({
    loaded,
    toolboxes: options.toolboxes,
    logger,
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping worker');
    worker.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'worker did not close cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    await worker.start();
  } catch (error) {
    // Skills are read when the worker builds its agents: a bad one is a config problem like any other.
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      await worker.close(0);
      process.exit(2);
    }
    throw error;
  }
  return worker;
}
