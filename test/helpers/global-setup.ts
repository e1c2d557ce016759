import type { TestProject } from 'vitest/node';
import { findRedis } from './find-redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** Finds (or starts) one Redis for the whole run; every test isolates itself with its own key prefix. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await findRedis();
  project.provide('redisUrl', redis.url);
  return redis.stop;
}
