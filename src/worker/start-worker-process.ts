import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/index.js';
import { RatchetError } from '../errors/index.js';
import type { Extensions } from '../extensions/index.js';
import { createLogger, logFormatProblem } from '../log/index.js';
import { knownToolboxes } from '../tools/builtin/index.js';
import type { ToolBox } from '../tools/index.js';
import { RatchetWorker } from './ratchet-worker.js';
import { catchShutdownSignals, onShutdownSignal } from './shutdown-signals.js';

export interface WorkerProcessOptions {
  argv: string[];
  /** Toolboxes registered from code, beside the built-in ones (which the config's `tools` section sets up). */
  toolboxes: readonly ToolBox[];
  /** Effects, coordinators, stop conditions and middleware written in code, which the config may name. */
  extensions?: Extensions;
}

/**
 * Runs a worker until SIGTERM/SIGINT: stops taking jobs, finishes or hands back in-flight steps within the
 * configured deadline, and exits 0 — in every state: starting, idle, busy, or with Redis unreachable (then
 * what it holds is taken over when its locks expire). A config that does not load is printed with every
 * problem; exit 2.
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<RatchetWorker> {
  // First, before the config loads and Redis connects: a signal from now on is a clean shutdown.
  catchShutdownSignals();
  const logFormat = logFormatProblem(process.env);
  if (logFormat !== undefined) {
    process.stderr.write(`${logFormat}\n`);
    process.exit(2);
  }
  // Until the config says how it logs (log.format), as RATCHET_LOG_FORMAT says, else as auto.
  let logger = createLogger({ name: 'ratchet-worker' });
  let worker: RatchetWorker | undefined;
  let stopping = false;
  onShutdownSignal((signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping worker');
    if (!worker) {
      logger.info('worker closed');
      process.exit(0);
    }
    const closing = worker;
    // The last resort, should a close ignore its bound: exit anyway (a step still held is taken over by
    // another worker when its lock expires).
    setTimeout(() => {
      logger.warn('worker did not close in time: exiting anyway');
      process.exit(0);
    }, closing.shutdownBoundMs() + 2_000);
    closing.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'worker did not close cleanly');
        process.exit(1);
      },
    );
  });
  const { values } = parseArgs({
    args: options.argv,
    options: { config: { type: 'string', short: 'c' }, concurrency: { type: 'string' } },
    allowPositionals: false,
  });
  const configPath = values.config ?? process.env.RATCHET_CONFIG ?? 'config/demo.yaml';
  logger.info({ config: configPath }, 'worker starting');
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig(configPath, {
      knownToolboxes: knownToolboxes(options.toolboxes),
      ...(options.extensions ? { extensions: options.extensions } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (loaded.config.log.format !== 'auto') {
    logger = createLogger({ name: 'ratchet-worker', format: loaded.config.log.format });
  }
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    process.stderr.write(
      `--concurrency: must be a whole number of at least 1 (got "${values.concurrency}")\n`,
    );
    process.exit(2);
  }
  const started = new RatchetWorker({
    loaded,
    toolboxes: options.toolboxes,
    ...(options.extensions ? { extensions: options.extensions } : {}),
    logger,
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  worker = started;
  try {
    await started.start();
  } catch (error) {
    // A start cut short by the shutdown: the signal handler exits the process.
    if (stopping) return started;
    // Skills and scripts are read when the worker builds its agents: a bad one is a config problem like
    // any other (printed, exit 2), not a crash with a stack trace.
    if (error instanceof RatchetError && error.code === 'config_invalid') {
      process.stderr.write(`${error.message}\n`);
      await started.close(0);
      process.exit(2);
    }
    throw error;
  }
  return started;
}
