import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { type ExtensionWorkerProcess, spawnExtensionWorker } from './extension-worker.js';
import type { ExtensionWorld } from './extension-world.js';

/**
 * The worlds and worker processes of a test file's tests, closed and killed (by the pid each child has) after
 * each test: `keep(world)` registers a world, `spawn(...)` starts a worker process of a fixture
 * (spawnExtensionWorker) and registers it.
 */
export function extensionScope() {
  const worlds: ExtensionWorld[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const world of worlds.splice(0)) await world.close();
  });
  return {
    keep(world: ExtensionWorld): ExtensionWorld {
      worlds.push(world);
      return world;
    },
    /** Closes a world before the test ends (a reference run's), and forgets it. */
    async release(world: ExtensionWorld): Promise<void> {
      await world.close();
      worlds.splice(worlds.indexOf(world), 1);
    },
    spawn(...args: Parameters<typeof spawnExtensionWorker>): ExtensionWorkerProcess {
      const worker = spawnExtensionWorker(...args);
      children.push(worker.child);
      return worker;
    },
  };
}
