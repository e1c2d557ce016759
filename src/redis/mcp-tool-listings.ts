import { listedToolSchema, type McpToolListings } from '../tools/index.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, mcpToolListingsKey } from './keys.js';

/** Tool listings in Redis, shared by every worker of the key space. Entries that do not parse are skipped. */
export function redisToolListings(redis: RedisClient, space: KeySpace): McpToolListings {
  const key = mcpToolListingsKey(space);
  return {
    async load(server) {
      const text = await redis.hget(key, server);
      if (!text) return undefined;
      let entries: unknown;
      try {
        entries = JSON.parse(text);
      } catch {
        return undefined;
      }
      if (!Array.isArray(entries)) return undefined;
      return entries.flatMap((entry) => {
        const parsed = listedToolSchema.safeParse(entry);
        return parsed.success ? [parsed.data] : [];
      });
    },
    async save(server, tools) {
      await redis.hset(key, server, JSON.stringify(tools));
    },
  };
}
