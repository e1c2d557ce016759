import type { Redis } from 'ioredis';

/**
 * A Redis key written out as data: its type, its value and its time to live, so a fixture of the records a
 * Ratchet version writes can be checked in and loaded into another Redis. Text is kept as it is; bytes that
 * are not UTF-8 are kept as base64.
 */
export type DumpedText = string | { base64: string };

export type DumpedKey =
  | { key: string; type: 'string'; ttl_ms: number | null; value: DumpedText }
  | { key: string; type: 'hash'; ttl_ms: number | null; value: [DumpedText, DumpedText][] }
  | { key: string; type: 'list'; ttl_ms: number | null; value: DumpedText[] }
  | { key: string; type: 'set'; ttl_ms: number | null; value: DumpedText[] }
  | { key: string; type: 'zset'; ttl_ms: number | null; value: [DumpedText, string][] }
  | { key: string; type: 'stream'; ttl_ms: number | null; value: DumpedStream };

export interface DumpedStream {
  last_id: string;
  entries: [string, DumpedText[]][];
  groups: { name: string; last_delivered_id: string }[];
}

function encode(bytes: Buffer): DumpedText {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') };
}

function decode(value: DumpedText): Buffer | string {
  return typeof value === 'string' ? value : Buffer.from(value.base64, 'base64');
}

function byText(a: DumpedText, b: DumpedText): number {
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Every key of the Redis (or those under `prefix:`), sorted by name, each written out by its type. */
export async function dumpRedis(redis: Redis, options: { prefix?: string } = {}): Promise<DumpedKey[]> {
  const names = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(
      cursor,
      'MATCH',
      options.prefix ? `${options.prefix}:*` : '*',
      'COUNT',
      1000,
    );
    cursor = next;
    for (const key of keys) names.add(key);
  } while (cursor !== '0');
  const dumped: DumpedKey[] = [];
  for (const key of [...names].sort()) {
    const entry = await dumpKey(redis, key);
    if (entry) dumped.push(entry);
  }
  return dumped;
}

async function dumpKey(redis: Redis, key: string): Promise<DumpedKey | undefined> {
  const type = await redis.type(key);
  const pttl = await redis.pttl(key);
  if (pttl === -2) return undefined; // expired between the scan and now
  const ttl_ms = pttl < 0 ? null : pttl;
  switch (type) {
    case 'none':
      return undefined;
    case 'string': {
      const value = await redis.getBuffer(key);
      return value === null ? undefined : { key, type, ttl_ms, value: encode(value) };
    }
    case 'hash': {
      const flat = await redis.hgetallBuffer(key);
      const value = Object.entries(flat)
        .map(([field, bytes]): [DumpedText, DumpedText] => [field, encode(bytes)])
        .sort((a, b) => byText(a[0], b[0]));
      return { key, type, ttl_ms, value };
    }
    case 'list':
      return { key, type, ttl_ms, value: (await redis.lrangeBuffer(key, 0, -1)).map(encode) };
    case 'set':
      return { key, type, ttl_ms, value: (await redis.smembersBuffer(key)).map(encode).sort(byText) };
    case 'zset': {
      const flat = await redis.zrangeBuffer(key, 0, -1, 'WITHSCORES');
      const value: [DumpedText, string][] = [];
      for (let index = 0; index + 1 < flat.length; index += 2) {
        value.push([encode(flat[index] as Buffer), (flat[index + 1] as Buffer).toString()]);
      }
      return { key, type, ttl_ms, value };
    }
    case 'stream':
      return { key, type, ttl_ms, value: await dumpStream(redis, key) };
    default:
      throw new Error(`dumpRedis: key ${key} has type ${type}, which a fixture cannot hold`);
  }
}

async function dumpStream(redis: Redis, key: string): Promise<DumpedStream> {
  const entries = (await redis.xrangeBuffer(key, '-', '+')).map(([id, fields]): [string, DumpedText[]] => [
    id.toString(),
    fields.map(encode),
  ]);
  const info = (await redis.call('XINFO', 'STREAM', key)) as unknown[];
  const lastId = String(info[info.indexOf('last-generated-id') + 1]);
  const groupInfos = (await redis.call('XINFO', 'GROUPS', key)) as unknown[][];
  const groups = groupInfos.map((group) => ({
    name: String(group[group.indexOf('name') + 1]),
    last_delivered_id: String(group[group.indexOf('last-delivered-id') + 1]),
  }));
  return { last_id: lastId, entries, groups };
}

/**
 * Writes dumped keys into a Redis that has none of them, each with its time to live (counted from now).
 * Pending entries of stream consumer groups are not kept: their groups start again from the last delivered id.
 */
export async function restoreRedis(redis: Redis, keys: readonly DumpedKey[]): Promise<void> {
  for (const entry of keys) {
    const { key } = entry;
    if ((await redis.exists(key)) > 0) throw new Error(`restoreRedis: ${key} exists already`);
    switch (entry.type) {
      case 'string':
        await redis.set(key, decode(entry.value));
        break;
      case 'hash':
        await redis.hset(key, ...entry.value.flatMap(([field, value]) => [decode(field), decode(value)]));
        break;
      case 'list':
        await redis.rpush(key, ...entry.value.map(decode));
        break;
      case 'set':
        await redis.sadd(key, ...entry.value.map(decode));
        break;
      case 'zset':
        await redis.zadd(key, ...entry.value.flatMap(([member, score]) => [score, decode(member)]));
        break;
      case 'stream':
        await restoreStream(redis, key, entry.value);
        break;
      default:
        throw new Error(`restoreRedis: unknown type of ${(entry as { key: string }).key}`);
    }
    if (entry.ttl_ms !== null) await redis.pexpire(key, Math.max(1, entry.ttl_ms));
  }
}

async function restoreStream(redis: Redis, key: string, stream: DumpedStream): Promise<void> {
  for (const [id, fields] of stream.entries) {
    await redis.xadd(key, id, ...fields.map(decode));
  }
  if (stream.entries.length === 0) {
    // An empty stream exists only through XADD + XDEL, or a group made with MKSTREAM.
    await redis.call('XGROUP', 'CREATE', key, '__restore__', '0', 'MKSTREAM');
    await redis.call('XGROUP', 'DESTROY', key, '__restore__');
  }
  await redis.call('XSETID', key, stream.last_id);
  for (const group of stream.groups) {
    await redis.call('XGROUP', 'CREATE', key, group.name, group.last_delivered_id);
  }
}
