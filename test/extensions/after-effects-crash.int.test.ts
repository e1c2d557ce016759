import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Message, textOf } from '../../src/chat/index.js';
import { coinAfterReply } from '../fixtures/after-effects.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { extensionScope } from '../helpers/extension-scope.js';
import { ExtensionWorld } from '../helpers/extension-world.js';
import { normalizeEvents, normalizeTranscript } from '../helpers/harness.js';
import { journalEntry } from '../helpers/journal-entry.js';

// The after phase of effects (decision 0044): an effect that decides at random after every reply is called
// again only when a worker died before the reply (and so its decision) was recorded; after that commit the
// decision is read, never made again, and the transcript holds each decision once.

const scope = extensionScope();

const config = {
  providers: [
    {
      name: 'model',
      kind: 'scripted',
      model: 'test',
      replies: [
        { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
        { tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
        { text: 'three and seven' },
      ],
      record_calls: 'calls.jsonl',
    },
  ],
  agents: [
    {
      name: 'agent',
      provider: 'model',
      toolboxes: ['test'],
      effects: [{ kind: 'coin_after' }],
    },
  ],
};

function newWorld(): ExtensionWorld {
  const world = new ExtensionWorld(config, { effects: [coinAfterReply] });
  return scope.keep(world);
}

/** The after phase's calls the effect logged, by iteration. */
function callsByIteration(log: string): Map<number, string[]> {
  const calls = new Map<number, string[]>();
  for (const line of readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')) {
    const [iteration, pick] = line.split(' ');
    calls.set(Number(iteration), [...(calls.get(Number(iteration)) ?? []), pick ?? '']);
  }
  return calls;
}

function spawnWorker(world: ExtensionWorld, log: string, crashAt?: string) {
  return scope.spawn(world, 'test/fixtures/after-effect-worker.ts', crashAt, { AFTER_EFFECT_LOG: log });
}

const picks = /pick=0\.[0-9]{12}/g;
const withoutPicks = (value: unknown) => JSON.parse(JSON.stringify(value).replace(picks, 'pick=X'));

/** Each reply's recorded decision is the one in the transcript, once, where the after phase puts it. */
async function expectDecisionsAsRecorded(
  world: ExtensionWorld,
  sessionId: string,
  runId: string,
  chat: Message[],
) {
  const notes = chat.filter((message) => message.metadata.after === true);
  expect(notes.map((message) => message.metadata.iteration)).toEqual([1, 2, 3]);
  for (const note of notes) {
    const iteration = note.metadata.iteration as number;
    const entry = await journalEntry(world, sessionId, runId, `reply:${iteration}`);
    const [decision] = entry.after.decisions;
    expect(decision).toMatchObject({ effect: 'coin_after', message_id: note.id, events: ['progress'] });
    expect(textOf(note)).toBe(`after iteration ${iteration}: pick=${decision.note.pick}`);
    expect(note.sender).toBe('coin');
  }
  // A reply with tool calls keeps its results next to it: its note follows the results; the final answer's
  // note follows the answer.
  expect(chat.map((message) => `${message.role}:${message.sender}`)).toEqual([
    'user:user',
    'assistant:agent',
    'tool:add',
    'user:coin',
    'assistant:agent',
    'tool:add',
    'user:coin',
    'assistant:agent',
    'user:coin',
  ]);
}

describe('an effect with an after phase', () => {
  it('decides once per recorded reply across SIGKILLs before and after the reply is recorded', async () => {
    const reference = newWorld();
    const referenceLog = join(reference.dir, 'after.log');
    process.env.AFTER_EFFECT_LOG = referenceLog;
    await reference.start();
    const started = await reference.engine.startRun({ input: 'add twice' });
    expect((await reference.engine.waitForRun(started.runId, { timeoutMs: 60_000 })).status).toBe(
      'completed',
    );
    const referenceChat = await reference.engine.readChat(started.sessionId);
    await expectDecisionsAsRecorded(reference, started.sessionId, started.runId, referenceChat);
    expect([...callsByIteration(referenceLog).values()].map((calls) => calls.length)).toEqual([1, 1, 1]);
    const referenceEvents = await reference.engine.readEvents(started.sessionId);
    expect(
      referenceEvents.filter((event) => event.kind === 'progress' && /pick=/.test(JSON.stringify(event))),
    ).toHaveLength(3);
    const referenceCalls = reference.modelCalls().length;
    expect(referenceCalls).toBe(3);
    await scope.release(reference);
    delete process.env.AFTER_EFFECT_LOG;

    const world = newWorld();
    const log = join(world.dir, 'after.log');
    const { runId, sessionId } = await world.engine.startRun({ input: 'add twice' });
    // Iteration 1's after phase decided, its reply not recorded; recorded (and decided again); then iteration
    // 2's decided, not recorded: the worker that repeats iteration 1's step after its commit does not reach
    // the point (it reads the decision), so the third kill is in iteration 2.
    const crashPoints = [
      'iteration.after_effects_decided',
      'iteration.after_commit',
      'iteration.after_effects_decided',
    ];
    for (const point of crashPoints) {
      const doomed = spawnWorker(world, log, point);
      const exit = await waitForExit(doomed as never, 60_000);
      expect(exit.signal, `worker should die at ${point}:\n${doomed.output()}`).toBe('SIGKILL');
      expect(doomed.output()).toContain(`crash point ${point.split('@')[0]} reached`);
    }
    const rescuer = spawnWorker(world, log);
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code, rescuer.output()).toBe(0);

    // Iteration 1 was decided twice: once by the worker killed before its reply was recorded, once by the
    // one that recorded it (and died after the commit); the workers after that read the decision. Iteration 2
    // likewise (killed after deciding, before its commit), iteration 3 once.
    const calls = callsByIteration(log);
    expect([...calls.entries()].map(([iteration, picks]) => [iteration, picks.length])).toEqual([
      [1, 2],
      [2, 2],
      [3, 1],
    ]);
    const chat = await world.engine.readChat(sessionId);
    const events = await world.engine.readEvents(sessionId);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    await expectDecisionsAsRecorded(world, sessionId, runId, chat);
    // The recorded decision is the last one made before the commit.
    for (const [iteration, made] of calls) {
      const entry = await journalEntry(world, sessionId, runId, `reply:${iteration}`);
      expect(entry.after.decisions[0].note.pick).toBe(made.at(-1));
    }
    expect(withoutPicks(normalizeTranscript(chat, runId))).toEqual(
      withoutPicks(normalizeTranscript(referenceChat, started.runId)),
    );
    expect(withoutPicks(normalizeEvents(events, runId))).toEqual(
      withoutPicks(normalizeEvents(referenceEvents, started.runId)),
    );
    expect(world.modelCalls().length).toBeLessThanOrEqual(referenceCalls + crashPoints.length);
  }, 600_000);
});
