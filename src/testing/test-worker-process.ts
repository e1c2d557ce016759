import { silentLogger } from '../log/index.js';
import { createRedis } from '../redis/connection.js';
import { startWorkerProcess } from '../worker/index.js';
import { redisLedger } from './ledger.js';
import { loadTestWorker } from './test-worker.js';

/** The environment variables through which a test engine tells its worker processes what to load. */
export const testWorkerEnv = {
  module: 'RATCHET_TEST_WORKER_MODULE',
  redisUrl: 'RATCHET_TEST_REDIS_URL',
  prefix: 'RATCHET_TEST_PREFIX',
  /** `1`: load everything, then wait for a line on stdin before taking jobs (a worker started ahead). */
  held: 'RATCHET_TEST_WORKER_HELD',
} as const;

/** Runs a test engine's worker process until SIGTERM (or a crash point). */
export async function startTestWorkerProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const redisUrl = env[testWorkerEnv.redisUrl];
  const prefix = env[testWorkerEnv.prefix];
  if (!redisUrl || !prefix) {
    throw new Error(`a test worker needs ${testWorkerEnv.redisUrl} and ${testWorkerEnv.prefix}`);
  }
  const redis = createRedis({ url: redisUrl, logger: silentLogger(), name: 'test-ledger' });
  const setup = await loadTestWorker(env[testWorkerEnv.module] || undefined, {
    ledger: redisLedger(redis, prefix),
  });
  if (env[testWorkerEnv.held] === '1') await firstLine(process.stdin);
  await startWorkerProcess({
    argv,
    toolboxes: setup.toolboxes ?? [],
    ...(setup.extensions ? { extensions: setup.extensions } : {}),
  });
}

/** Resolves at the first line (or the end) of a stream. */
async function firstLine(stream: NodeJS.ReadableStream): Promise<void> {
  await new Promise<void>((resolveLine) => {
    const done = () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', done);
      if ('pause' in stream) stream.pause();
      resolveLine();
    };
    const onData = (chunk: Buffer | string) => {
      if (chunk.toString().includes('\n')) done();
    };
    stream.on('data', onData);
    stream.once('end', done);
  });
}
