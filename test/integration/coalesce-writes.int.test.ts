import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { closeRedis, createRedis } from '../../src/redis/connection.js';
import { deleteKeys } from '../helpers/harness.js';

const prefix = `t-cw-${randomBytes(4).toString('hex')}`;
const opened: Redis[] = [];

function connect(batching: 'per-turn' | 'none', lazy = false): Redis {
  const redis = createRedis({
    url: inject('redisUrl'),
    logger: silentLogger(),
    name: 'coalesce-test',
    batching,
    lazy,
  });
  opened.push(redis);
  return redis;
}

/** Counts the system-call-level writes (a single chunk, or several in one writev) of a connected client. */
function countWrites(redis: Redis): { writes: number; chunks: number } {
  const socket = redis.stream as Socket & {
    _write: (...args: unknown[]) => void;
    _writev: (chunks: unknown[], ...rest: unknown[]) => void;
  };
  const counts = { writes: 0, chunks: 0 };
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...args) => {
    counts.writes += 1;
    counts.chunks += 1;
    write(...args);
  };
  socket._writev = (chunks, ...rest) => {
    counts.writes += 1;
    counts.chunks += chunks.length;
    writev(chunks, ...rest);
  };
  return counts;
}

/** Ten commands from ten promise continuations of one turn, the way concurrent steps send them. */
async function burst(redis: Redis, key: string): Promise<number[]> {
  const ready = Promise.resolve();
  return Promise.all(Array.from({ length: 10 }, () => ready.then(() => redis.incr(key))));
}

afterEach(async () => {
  const [first] = opened;
  if (first) await deleteKeys(first, prefix);
  for (const redis of opened.splice(0)) await closeRedis(redis);
});

describe('write coalescing (worker connections)', () => {
  it('sends the commands of one event-loop turn in one write, in order', async () => {
    const redis = connect('per-turn');
    await redis.ping();
    const counts = countWrites(redis);
    expect(await burst(redis, `${prefix}:n`)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(counts).toEqual({ writes: 1, chunks: 10 });
    // A command sent after the replies came back is a turn of its own.
    expect(await redis.incr(`${prefix}:n`)).toBe(11);
    expect(counts.writes).toBe(2);
  });

  it('without it, each command is a write of its own', async () => {
    const redis = connect('none');
    await redis.ping();
    const counts = countWrites(redis);
    await burst(redis, `${prefix}:plain`);
    expect(counts.writes).toBe(10);
  });

  it('keeps coalescing on the new socket after a reconnect, and on duplicates', async () => {
    const redis = connect('per-turn');
    await redis.ping();
    const firstSocket = redis.stream;
    const reconnected = new Promise((resolve) => redis.once('ready', resolve));
    redis.disconnect(true);
    await reconnected;
    expect(redis.stream).not.toBe(firstSocket);
    const counts = countWrites(redis);
    await burst(redis, `${prefix}:again`);
    expect(counts.writes).toBe(1);

    const duplicate = redis.duplicate();
    opened.push(duplicate);
    await duplicate.ping();
    const duplicateCounts = countWrites(duplicate);
    expect(await burst(duplicate, `${prefix}:again`)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(duplicateCounts.writes).toBe(1);
  });

  it('a lazy template connects only through its duplicates (how BullMQ workers get theirs)', async () => {
    const template = connect('per-turn', true);
    expect(template.status).toBe('wait');
    const duplicate = template.duplicate();
    opened.push(duplicate);
    await duplicate.connect();
    const counts = countWrites(duplicate);
    await burst(duplicate, `${prefix}:lazy`);
    expect(counts.writes).toBe(1);
    expect(template.status).toBe('wait');
  });
});
