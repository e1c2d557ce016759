import { type ListedTool, listedToolSchema } from '../mcp/client/mcp-tool.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, mcpToolListingsKey } from './keys.js';

/**
 * Where a server's tool list is kept between workers: a worker that starts while a server is down offers
 * the tools some worker listed last (their calls get an error result until the server is back), instead of
 * none, which would leave the model calling tools it was never told of.
 */
export interface McpToolListings {
  load(server: string): Promise<ListedTool[] | undefined>;
  save(server: string, tools: readonly ListedTool[]): Promise<void>;
}

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
