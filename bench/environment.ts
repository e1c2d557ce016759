import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import { redactUrl } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';

/** One line saying what the numbers were measured on. */
export async function describeEnvironment(url: string): Promise<string> {
  const redis = createRedis({ url, logger: silentLogger(), name: 'bench-info' });
  let redisVersion: string;
  let otherClients: number;
  try {
    const info = await redis.info('server');
    redisVersion = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    // Anyone else using this Redis during the bench (tests, other benches) shows up in the numbers.
    otherClients =
      String(await redis.client('LIST'))
        .trim()
        .split('\n').length - 1;
  } finally {
    await closeRedis(redis);
  }
  const processors = cpus();
  const bullmq = (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;
  return [
    `${processors.length} × ${processors[0]?.model.trim() ?? 'unknown CPU'}`,
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `node ${process.version}`,
    `Redis ${redisVersion} at ${redactUrl(url)} (${otherClients} other clients connected at start)`,
    `BullMQ ${bullmq}`,
  ].join(' · ');
}
