import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunTreeSnapshot, readRunTree } from '../../src/testing/run-snapshot.js';
import type { RunView } from '../../src/workflows/views.js';
import { waitForExit } from './crash-scenario.js';
import { Harness, type HarnessOptions } from './harness.js';

/** A run and every run below it (delegations, team members), as comparable data. */
export type TreeSnapshot = Omit<RunTreeSnapshot, 'status'>;

/** Reads a run tree from Redis (src/testing's readRunTree), checking on the way that nothing is there twice. */
export async function snapshotTree(h: Harness, sessionId: string, rootId: string): Promise<TreeSnapshot> {
  const { snapshot, duplicates } = await readRunTree(h, sessionId, rootId);
  expect(duplicates, 'something is there twice').toEqual([]);
  const { status: _status, ...tree } = snapshot;
  return tree;
}

/** Starts the root run, SIGKILLs a worker at the crash point, lets a fresh worker finish: the tree's snapshot. */
export async function crashTreeAndTakeOver(
  h: Harness,
  start: { input: string; agent?: string },
  crashAt: string,
): Promise<TreeSnapshot> {
  const { runId, sessionId } = await h.engine.startRun(start);
  const doomed = h.spawnWorker({ crashAt });
  const exit = await waitForExit(doomed, 30_000);
  expect(exit.signal, doomed.output()).toBe('SIGKILL');
  const rescuer = h.spawnWorker();
  const run = await h.engine.waitForRun(runId, { timeoutMs: 45_000 });
  expect(isDone(run), rescuer.output()).toBe(true);
  const snapshot = await snapshotTree(h, sessionId, runId);
  await rescuer.stop();
  return snapshot;
}

/** Runs the scenario once without faults in a worker process: the oracle. */
export async function referenceTree(
  h: Harness,
  start: { input: string; agent?: string },
): Promise<TreeSnapshot> {
  const worker = h.spawnWorker();
  const { runId, sessionId } = await h.engine.startRun(start);
  expect(isDone(await h.engine.waitForRun(runId, { timeoutMs: 30_000 }))).toBe(true);
  const snapshot = await snapshotTree(h, sessionId, runId);
  await worker.stop();
  return snapshot;
}

function isDone(run: RunView): boolean {
  return run.status === 'completed' || run.status === 'failed';
}

export interface TreeCrashScenario {
  title: string;
  options: HarnessOptions;
  start: { input: string; agent?: string };
  /** Checks of the run without faults, the oracle of every crash. */
  checkReference(reference: TreeSnapshot): void;
  /** Crash points (`point@N`) with what is happening there. */
  points: [crashAt: string, what: string][];
  /** Model calls beyond the reference's allowed after a kill: one per step in flight when it came. */
  extraModelCalls: number;
}

/**
 * A crash suite for a run tree: the scenario once without faults, then once per crash point with a worker
 * SIGKILLed there and a fresh one taking over. Each must end as the reference did, nothing duplicated, and
 * no model call of a finished step made again.
 */
export function describeTreeCrashes(scenario: TreeCrashScenario): void {
  let reference: TreeSnapshot;
  let referenceModelCalls = 0;
  const harnesses: Harness[] = [];
  const harness = () => {
    const h = new Harness(scenario.options);
    harnesses.push(h);
    return h;
  };
  beforeAll(async () => {
    const h = harness();
    reference = await referenceTree(h, scenario.start);
    referenceModelCalls = h.modelCalls().length;
    scenario.checkReference(reference);
  });
  afterAll(async () => {
    await Promise.allSettled(harnesses.map((h) => h.close()));
  });
  describe(scenario.title, () => {
    it.each(scenario.points)('%s (%s)', async (crashAt) => {
      const h = harness();
      expect(await crashTreeAndTakeOver(h, scenario.start, crashAt)).toEqual(reference);
      expect(h.modelCalls().length).toBeLessThanOrEqual(referenceModelCalls + scenario.extraModelCalls);
    });
  });
}
