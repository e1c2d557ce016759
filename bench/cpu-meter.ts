import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';

/** CPU time spent while a measurement ran, in milliseconds. */
export interface CpuUse {
  /** This process: the workers, the clients and the bench itself. */
  processMs: number;
  /** The Redis server, whoever made it work (other clients count too). */
  redisMs: number;
}

/** Starts measuring; the returned function stops and tells the CPU time used since. */
export async function startCpuMeter(url: string): Promise<() => Promise<CpuUse>> {
  const redis = createRedis({ url, logger: silentLogger(), name: 'bench-cpu-meter' });
  const redisBefore = await redisCpuMs(redis);
  const processBefore = process.cpuUsage();
  return async () => {
    const processUsed = process.cpuUsage(processBefore);
    try {
      return {
        processMs: (processUsed.user + processUsed.system) / 1000,
        redisMs: (await redisCpuMs(redis)) - redisBefore,
      };
    } finally {
      await closeRedis(redis);
    }
  };
}

async function redisCpuMs(redis: ReturnType<typeof createRedis>): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}
