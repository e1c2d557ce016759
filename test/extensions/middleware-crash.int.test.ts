import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, textOf, toolResultsOf } from '../../src/chat/index.js';
import { testMiddleware } from '../fixtures/middleware-extensions.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { spawnExtensionWorker } from '../helpers/extension-worker.js';
import { ExtensionWorld } from '../helpers/extension-world.js';
import { normalizeEvents, normalizeTranscript } from '../helpers/harness.js';
import { journalEntry } from '../helpers/journal-entry.js';

// Decisions are recorded, not made again: a middleware that decides at random on every call (Math.random,
// on purpose) still gives one transcript across ten SIGKILLs of the worker, each decision in it once and
// the same as its recorded one.

const worlds: ExtensionWorld[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const world of worlds.splice(0)) await world.close();
});

const iterations = 12;
const replies = [
  ...Array.from({ length: iterations }, (_, index) => ({
    tool_calls: [{ name: 'add', arguments: { a: index, b: 1 } }],
  })),
  { text: 'added twelve times' },
];
const config = {
  providers: [{ name: 'model', kind: 'scripted', model: 'test', replies, record_calls: 'calls.jsonl' }],
  agents: [
    {
      name: 'agent',
      provider: 'model',
      toolboxes: ['test'],
      middleware: [{ kind: 'coin_flip' }],
      options: { max_iterations: 20 },
    },
  ],
};

/** A worker process with the test middleware, armed with a crash point or not. */
function spawnWorker(world: ExtensionWorld, crashAt?: string) {
  const worker = spawnExtensionWorker(world, 'test/fixtures/middleware-worker.ts', crashAt);
  children.push(worker.child);
  return worker;
}

// Fixed-length numbers: the scripted model counts tokens by length, and the counts must agree.
const picks = /pick=0\.[0-9]{12}/g;
const withoutPicks = (value: unknown) => JSON.parse(JSON.stringify(value).replace(picks, 'pick=X'));

/** Every recorded decision of the run is the one in its transcript, each once. */
async function expectDecisionsAsRecorded(
  world: ExtensionWorld,
  sessionId: string,
  runId: string,
  chat: Message[],
) {
  const replies = chat.filter((message) => message.role === 'assistant');
  expect(replies).toHaveLength(iterations + 1);
  for (const reply of replies) {
    const iteration = reply.metadata.iteration as number;
    const entry = await journalEntry(world, sessionId, runId, `reply:${iteration}`);
    const [decision] = entry.middleware;
    expect(decision.name).toBe('coin_flip');
    expect(textOf(reply).match(picks)).toEqual([`pick=${decision.note.pick}`]);
  }
  const results = chat.flatMap((message) => toolResultsOf(message));
  expect(results).toHaveLength(iterations);
  for (const [index, result] of results.entries()) {
    const outcome = await journalEntry(world, sessionId, runId, `tool:${index + 1}:0:outcome`);
    expect(result.content.match(picks)).toEqual([`pick=${outcome.middleware[0].note.pick}`]);
  }
}

describe('a middleware that decides at random', () => {
  it('gives one transcript across ten SIGKILLs of the worker: its decisions are recorded, not made again', async () => {
    const reference = new ExtensionWorld(config, { middleware: testMiddleware });
    worlds.push(reference);
    await reference.start();
    const started = await reference.engine.startRun({ input: 'add, twelve times' });
    expect((await reference.engine.waitForRun(started.runId, { timeoutMs: 60_000 })).status).toBe(
      'completed',
    );
    const referenceChat = await reference.engine.readChat(started.sessionId);
    await expectDecisionsAsRecorded(reference, started.sessionId, started.runId, referenceChat);

    const world = new ExtensionWorld(config, { middleware: testMiddleware });
    worlds.push(world);
    const { runId, sessionId } = await world.engine.startRun({ input: 'add, twelve times' });
    const crashPoints = [
      'iteration.after_model_call',
      'iteration.after_commit',
      'tool.mid_call',
      'tool.before_commit',
      'tool.after_commit',
      'iteration.before_model_call',
      'iteration.after_enqueue',
      'tool.before_next_iteration',
      'iteration.after_model_call',
      'iteration.after_commit',
    ];
    for (const point of crashPoints) {
      const doomed = spawnWorker(world, point);
      const exit = await waitForExit(doomed as never, 60_000);
      expect(exit.signal, `worker should die at ${point}:\n${doomed.output()}`).toBe('SIGKILL');
      expect(doomed.output()).toContain(`crash point ${point} reached`);
    }
    const rescuer = spawnWorker(world);
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code, rescuer.output()).toBe(0);

    const chat = await world.engine.readChat(sessionId);
    const events = await world.engine.readEvents(sessionId);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    await expectDecisionsAsRecorded(world, sessionId, runId, chat);
    expect(withoutPicks(normalizeTranscript(chat, runId))).toEqual(
      withoutPicks(normalizeTranscript(referenceChat, started.runId)),
    );
    expect(withoutPicks(normalizeEvents(events, runId))).toEqual(
      withoutPicks(normalizeEvents(await reference.engine.readEvents(started.sessionId), started.runId)),
    );
    // A model call is made again only when a worker died before its reply was recorded.
    expect(world.modelCalls().length).toBeLessThanOrEqual(reference.modelCalls().length + crashPoints.length);
  }, 600_000);
});
