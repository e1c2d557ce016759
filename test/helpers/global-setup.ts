import type { TestProject } from 'vitest/node';
import { findRedis } from './find-redis.js';
import { buildWorkerBundle } from './worker-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** The test worker as one module (test/helpers/worker-bundle.ts): what Harness.spawnWorker starts. */
    workerBundle: string;
  }
}

/**
 * Finds (or starts) one Redis for the whole run (every test isolates itself with its own key prefix), and
 * builds the test worker that the crash suites start in child processes.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('workerBundle', await buildWorkerBundle());
  const redis = await findRedis();
  project.provide('redisUrl', redis.url);
  return redis.stop;
}
