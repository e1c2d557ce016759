import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../log/index.js';
import { coalesceWrites } from './coalesce-writes.js';
import { redisOutageLog } from './redis-outage.js';

/**
 * A connection to Ratchet's Redis: one server, or a Redis Cluster (every key a command or script touches shares
 * one hash tag, so each lands on one slot).
 */
export type RedisClient = Redis | Cluster;

/** Where Redis is: `redis.url`, or the seed nodes of a cluster (`redis.cluster_nodes`). */
export interface RedisTarget {
  url: string;
  /** Seed nodes (redis:// URLs) of a Redis Cluster; when given, `url` is not used. */
  clusterNodes?: readonly string[] | undefined;
}

/** The target of a config's `redis` section. */
export function redisTargetOf(redis: {
  url: string;
  cluster_nodes?: readonly string[] | undefined;
}): RedisTarget {
  return { url: redis.url, ...(redis.cluster_nodes ? { clusterNodes: redis.cluster_nodes } : {}) };
}

export interface ConnectionOptions extends RedisTarget {
  logger: Logger;
  /** Connection name shown by CLIENT LIST. */
  name: string;
  /**
   * Workers need `null` (retry forever, BullMQ's requirement); request/response callers (API) may prefer
   * a bound so they fail fast while Redis is away.
   */
  maxRetriesPerRequest?: number | null;
  /**
   * How commands sent close together share socket writes: `auto-pipeline` (ioredis' auto-pipelining, the
   * default: cheap for request/response callers), `per-turn` (one write per event-loop turn, see
   * coalesceWrites: workers) or `none` (subscribers).
   */
  batching?: 'auto-pipeline' | 'per-turn' | 'none';
  /** Connect on first use, not now: for a template that is only duplicated (BullMQ workers). */
  lazy?: boolean;
  /**
   * A command that gets no answer in this time fails ("Command timed out"), queued ones included: a
   * request/response caller (the API) is bounded even when Redis is frozen. Never on connections that
   * block (XREAD BLOCK, BullMQ workers): they would fail while they wait.
   */
  commandTimeoutMs?: number;
}

/** A Redis client with an error handler (an unhandled 'error' event would crash the process). */
export function createRedis(options: ConnectionOptions & { clusterNodes?: undefined }): Redis;
export function createRedis(options: ConnectionOptions): RedisClient;
export function createRedis(options: ConnectionOptions): RedisClient {
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? null : options.maxRetriesPerRequest,
    connectionName: options.name,
    enableAutoPipelining: (options.batching ?? 'auto-pipeline') === 'auto-pipeline',
    lazyConnect: options.lazy ?? false,
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  };
  const redis: RedisClient =
    options.clusterNodes && options.clusterNodes.length > 0
      ? clusterClient(options.clusterNodes, redisOptions)
      : new Redis(options.url, redisOptions);
  // Per-turn coalescing works on one socket; a cluster client keeps one per node (and its own batching).
  if (options.batching === 'per-turn' && redis instanceof Redis) coalesceWrites(redis);
  // An outage is told once for the whole process (redis-outage.ts), and its end when a connection is ready.
  const outage = redisOutageLog(options.logger);
  redis.on('error', (error: Error) => {
    if (!outage.absorb(error)) {
      options.logger.warn({ err: error, connection: options.name }, 'redis connection error');
    }
  });
  redis.on('ready', () => outage.ready());
  return redis;
}

/**
 * A Redis Cluster client from seed node URLs. Every command goes to the master of its slot (no reads from
 * replicas: a step must read what it committed); the per-node connections take the same options.
 */
function clusterClient(nodes: readonly string[], redisOptions: RedisOptions): Cluster {
  const seeds = nodes.map((node) => {
    const url = new URL(node);
    return { host: url.hostname, port: Number(url.port || 6379) };
  });
  const first = new URL(nodes[0] as string);
  const password = first.password ? decodeURIComponent(first.password) : undefined;
  const username = first.username ? decodeURIComponent(first.username) : undefined;
  return new Cluster(seeds, {
    scaleReads: 'master',
    enableAutoPipelining: redisOptions.enableAutoPipelining ?? false,
    lazyConnect: redisOptions.lazyConnect ?? false,
    // Every command waits for a slot map (and retries a moved slot) rather than failing at once.
    enableOfflineQueue: true,
    redisOptions: {
      ...redisOptions,
      lazyConnect: false,
      ...(password ? { password } : {}),
      ...(username ? { username } : {}),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

/** Another client to the same Redis (or cluster), with some options changed. */
export function duplicateClient(client: RedisClient, overrides: RedisOptions): RedisClient {
  if (client instanceof Cluster) {
    return client.duplicate(undefined, {
      redisOptions: { ...client.options.redisOptions, ...overrides },
      ...(overrides.enableOfflineQueue === undefined
        ? {}
        : { enableOfflineQueue: overrides.enableOfflineQueue }),
    });
  }
  return client.duplicate(overrides);
}

/** The command timeout a client was made with, if any. */
export function commandTimeoutOf(client: RedisClient): number | undefined {
  return client instanceof Cluster
    ? client.options.redisOptions?.commandTimeout
    : client.options.commandTimeout;
}

/**
 * A plain connection to the master that serves `key`'s slot: blocking reads (XREAD BLOCK) and CLIENT UNBLOCK
 * must reach the node the read blocks on, which a cluster client's routing does not promise. On one Redis,
 * a duplicate of it.
 */
export function nodeClientFor(client: RedisClient, key: string, overrides: RedisOptions): Redis {
  if (!(client instanceof Cluster)) return client.duplicate(overrides);
  const slot = keySlot(key);
  const nodeKey = client.slots[slot]?.[0];
  const node = client
    .nodes('master')
    .find((candidate) => `${candidate.options.host}:${candidate.options.port}` === nodeKey);
  const base = node?.options ?? client.options.redisOptions ?? {};
  return new Redis({ ...base, ...overrides, lazyConnect: false });
}

/** The Redis Cluster slot of a key: CRC16 (XMODEM) of its hash tag (or of the whole key) modulo 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/**
 * Quit politely; disconnect if Redis does not answer within `timeoutMs` (a second by default). Bounded
 * whatever state Redis is in: down, frozen, or a cluster master missing.
 */
export async function closeRedis(redis: RedisClient, options: { timeoutMs?: number } = {}): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'wait') {
    // A lazy client that never connected: quitting would connect it first.
    redis.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.quit(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, options.timeoutMs ?? 1000);
      }),
    ]);
  } catch {
    // already closed
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}
