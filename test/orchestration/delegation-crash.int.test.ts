import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { runKeys } from '../../src/redis/keys.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness, type HarnessAgent } from '../helpers/harness.js';

/**
 * A lead spawns two children: `alpha` calls a tool and answers, `beta` answers at once. The worker is
 * SIGKILLed at a crash point somewhere in the tree and a fresh worker process takes over; the tree must end
 * as it does without the crash: the same answers, one child run per delegation, nothing duplicated.
 */
const agents: HarnessAgent[] = [
  {
    name: 'lead',
    script: {
      rules: [{ when: { role: 'tool' }, reply: { text: 'all done' } }],
      replies: [
        {
          tool_calls: [
            {
              name: 'spawn_agents',
              arguments: {
                tasks: [
                  { agent: 'alpha', task: 'task A' },
                  { agent: 'beta', task: 'task B' },
                ],
              },
            },
          ],
        },
      ],
    },
  },
  {
    name: 'alpha',
    script: {
      rules: [{ when: { role: 'tool' }, reply: { text: 'A is 5' } }],
      replies: [{ tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }],
    },
  },
  { name: 'beta', script: { default: { text: 'B done', delay_ms: 200 } } },
];

interface TreeSnapshot {
  result: string | null;
  /** Per agent: its normalized chat and its normalized events (sorted). */
  runs: Record<string, { chat: unknown[]; events: string[] }>;
  runCount: number;
  childCount: number;
}

function normalizer(ids: Map<string, string>) {
  return (text: string) => {
    let out = text;
    for (const [id, name] of ids) out = out.replaceAll(id, name);
    return out;
  };
}

async function snapshot(h: Harness, sessionId: string, rootId: string): Promise<TreeSnapshot> {
  const root = await h.engine.getRun(rootId);
  const childIds = await h.redis.smembers(runKeys(h.engine.space, sessionId, rootId).children);
  const children = await Promise.all(childIds.map((id) => h.engine.getRun(id)));
  const ids = new Map<string, string>([[rootId, 'RUN-lead']]);
  for (const child of children) if (child) ids.set(child.id, `RUN-${child.agent}`);
  const normalize = normalizer(ids);
  const events = await h.events(sessionId);
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  const runs: TreeSnapshot['runs'] = {};
  for (const [id, name] of ids) {
    const run = id === rootId ? root : children.find((child) => child?.id === id);
    const chat: Message[] = await h.engine.readChat(sessionId, id === rootId ? {} : { chatId: id });
    expect(new Set(chat.map((message) => message.id)).size, `duplicate message in ${name}`).toBe(chat.length);
    runs[name] = {
      chat: chat.map((message) => JSON.parse(normalize(JSON.stringify({ ...message, created_at: 'T' })))),
      events: events
        .filter((event) => event.run_id === id)
        .map((event) => normalize(JSON.stringify(comparable(event))))
        .sort(),
    };
    expect(run?.status, name).toBe('completed');
  }
  return {
    result: root?.result ?? null,
    runs,
    runCount: await h.redis.scard(runKeys(h.engine.space, sessionId, rootId).runs),
    childCount: childIds.length,
  };
}

/** An event without what differs between two executions (ids, times, the rerun marker). */
function comparable(event: RatchetEvent) {
  const { id: _id, time: _time, ...rest } = event;
  const data = { ...(rest.data as Record<string, unknown>) };
  if (data.message && typeof data.message === 'object') data.message = { ...data.message, created_at: 'T' };
  if (data.interrupted === 'rerun') delete data.interrupted;
  return { ...rest, data };
}

let reference: TreeSnapshot;
let referenceModelCalls = 0;
const harnesses: Harness[] = [];

beforeAll(async () => {
  const h = new Harness({ agents });
  harnesses.push(h);
  const worker = h.spawnWorker();
  const { runId, sessionId } = await h.engine.startRun({ input: 'split the work' });
  expect((await h.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
  reference = await snapshot(h, sessionId, runId);
  referenceModelCalls = h.modelCalls().length;
  await worker.stop();
  expect(reference.result).toBe('all done');
  expect(reference.childCount).toBe(2);
  expect(reference.runCount).toBe(3);
});

afterAll(async () => {
  await Promise.allSettled(harnesses.map((h) => h.close()));
});

describe('a delegation tree survives a SIGKILL anywhere', () => {
  it.each([
    // Model calls: 1 = lead, 2 and 3 = the children's first iterations.
    ['iteration.before_model_call@2', 'a child run is mid-iteration, both children running'],
    ['iteration.after_model_call@3', 'a child got its model reply but did not record it'],
    ['tool.mid_call@1', 'the parent is starting its children'],
    // Iteration commits: 1 = lead, then the children's (beta's final answer is one of 2..4).
    ['iteration.after_commit@3', 'a child just committed, the parent has not resumed'],
    ['iteration.after_commit@4', 'the last child just finished, the parent has not resumed'],
    ['tool.after_commit@2', "the parent's spawn call just recorded the children's answers"],
  ])('%s (%s)', async (crashAt) => {
    const h = new Harness({ agents });
    harnesses.push(h);
    const { runId, sessionId } = await h.engine.startRun({ input: 'split the work' });
    const doomed = h.spawnWorker({ crashAt });
    const exit = await waitForExit(doomed, 30_000);
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    const rescuer = h.spawnWorker();
    const run = await h.engine.waitForRun(runId, { timeoutMs: 45_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    const outcome = await snapshot(h, sessionId, runId);
    expect(outcome).toEqual(reference);
    // No model call of a step that finished is made again: only those the kill cut short, at most one per
    // step in flight (the two children run at once).
    expect(h.modelCalls().length).toBeLessThanOrEqual(referenceModelCalls + 2);
    await rescuer.stop();
  });
});
