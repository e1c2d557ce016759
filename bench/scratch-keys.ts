import { randomBytes } from 'node:crypto';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';

/** A key prefix no one else uses: one per measurement, deleted at its end. */
export function scratchPrefix(): string {
  return `bench-${randomBytes(6).toString('hex')}`;
}

/** Deletes every key under `prefix:` (SCAN + UNLINK, so a large key space never blocks Redis). */
export async function deleteScratchKeys(url: string, prefix: string): Promise<number> {
  const redis = createRedis({ url, logger: silentLogger(), name: 'bench-cleanup' });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await closeRedis(redis);
  }
  return deleted;
}
