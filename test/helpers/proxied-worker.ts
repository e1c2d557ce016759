import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Harness } from './harness.js';

/** A config file like the harness's whose Redis is reached through `url` (a proxy, bench/tcp-proxy.ts). */
export function configThrough(h: Harness, url: string, file: string): string {
  const config = JSON.parse(readFileSync(h.configPath, 'utf8')) as { redis: Record<string, unknown> };
  const path = join(h.dir, file);
  writeFileSync(path, JSON.stringify({ ...config, redis: { ...config.redis, url } }, null, 2));
  return path;
}

/** The host and port of the harness's Redis, for a proxy to forward to. */
export function redisTarget(h: Harness): { host: string; port: number } {
  const url = new URL(h.loaded.config.redis.url);
  return { host: url.hostname, port: Number(url.port || 6379) };
}
