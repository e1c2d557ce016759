import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { runKeys } from '../../src/redis/keys.js';
import type { RunView } from '../../src/workflows/views.js';
import { waitForExit } from './crash-scenario.js';
import { Harness, type HarnessOptions, withoutExecutionTimes } from './harness.js';

/** A run and every run below it (delegations, team members), as comparable data. */
export interface TreeSnapshot {
  result: string | null;
  /** Per run, named by its place in the tree (`lead`, `lead/alpha`, `lead/alpha#2` for a second turn): its chat and events. */
  runs: Record<string, { status: string; chat: unknown[]; events: string[] }>;
  /** Runs of the session: exactly the runs of the tree, one per delegation and turn. */
  runCount: number;
}

/**
 * Reads a run tree from Redis. Run ids differ between two executions of one scenario (a root's id is random
 * and its children's derive from it), so runs are named by their path in the tree and ids are replaced by
 * those names. Checks on the way that no message and no event is there twice.
 */
export async function snapshotTree(h: Harness, sessionId: string, rootId: string): Promise<TreeSnapshot> {
  const names = new Map<string, string>();
  const runs: RunView[] = [];
  const visit = async (runId: string, name: string) => {
    const run = await h.engine.getRun(runId);
    if (!run) throw new Error(`run ${runId} is missing`);
    names.set(runId, name);
    runs.push(run);
    const childIds = await h.redis.smembers(runKeys(h.engine.space, sessionId, runId).children);
    const children = (await Promise.all(childIds.map((id) => h.engine.getRun(id)))).flatMap((child) =>
      child ? [child] : [],
    );
    // Deterministic order: by the step that started them, then by agent.
    children.sort((a, b) => (a.created_at + a.agent).localeCompare(b.created_at + b.agent));
    const seen = new Map<string, number>();
    for (const child of children) {
      const count = (seen.get(child.agent) ?? 0) + 1;
      seen.set(child.agent, count);
      await visit(child.id, `${name}/${child.agent}${count > 1 ? `#${count}` : ''}`);
    }
  };
  await visit(rootId, 'root');
  const rename = (text: string) => {
    let out = text;
    for (const [id, name] of names) out = out.replaceAll(id, name);
    return out;
  };
  const events = await h.events(sessionId);
  expect(new Set(events.map((event) => event.id)).size, 'an event is there twice').toBe(events.length);
  const snapshot: TreeSnapshot['runs'] = {};
  for (const run of runs) {
    const name = names.get(run.id) ?? run.id;
    const chat: Message[] = await h.engine.readChat(sessionId, { chatId: run.chat_id });
    expect(new Set(chat.map((message) => message.id)).size, `a message of ${name} is there twice`).toBe(
      chat.length,
    );
    snapshot[name] = {
      status: run.status,
      chat: chat.map((message) =>
        JSON.parse(withoutExecutionTimes(rename(JSON.stringify({ ...message, created_at: 'T' })))),
      ),
      events: events
        .filter((event) => event.run_id === run.id)
        .map((event) => withoutExecutionTimes(rename(JSON.stringify(comparable(event)))))
        .sort(),
    };
  }
  return {
    result: runs[0]?.result ?? null,
    runs: snapshot,
    runCount: await h.redis.scard(runKeys(h.engine.space, sessionId, rootId).runs),
  };
}

/** An event without what differs between two executions (ids, times, the rerun marker). */
function comparable(event: RatchetEvent) {
  const { id: _id, time: _time, ...rest } = event;
  const data = { ...(rest.data as Record<string, unknown>) };
  if (data.message && typeof data.message === 'object') data.message = { ...data.message, created_at: 'T' };
  if (data.interrupted === 'rerun') delete data.interrupted;
  // A wall-clock length, like the times above: present, but not the same in two runs.
  if (typeof data.duration_ms === 'number') data.duration_ms = 'D';
  return { ...rest, data };
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
