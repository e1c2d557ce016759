import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import {
  crashAndTakeOver,
  expectSameAsReference,
  referenceRun,
  waitFor,
  waitForExit,
} from '../helpers/crash-scenario.js';
import type { Harness } from '../helpers/harness.js';
import { Harness as TestHarness } from '../helpers/harness.js';

let harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.allSettled(harnesses.map((harness) => harness.close()));
  harnesses = [];
});

function track(harness: Harness): Harness {
  harnesses.push(harness);
  return harness;
}

/** A seeded generator, so a failing chaos run can be replayed (the seed is in the test name). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const longScript: Script = {
  replies: [
    {
      text: 'one',
      tool_calls: [
        { name: 'slow_echo', arguments: { text: 'a', delay_ms: 120 } },
        { name: 'add', arguments: { a: 1, b: 2 } },
      ],
      delay_ms: 120,
    },
    {
      text: 'two',
      tool_calls: [{ name: 'send_email', arguments: { to: 'chaos@example.com' } }],
      delay_ms: 120,
    },
    {
      text: 'three',
      tool_calls: [{ name: 'slow_echo', arguments: { text: 'b', delay_ms: 150 } }],
      delay_ms: 120,
    },
    {
      text: 'four',
      tool_calls: [
        { name: 'add', arguments: { a: 3, b: 4 } },
        { name: 'add', arguments: { a: 5, b: 6 } },
      ],
      delay_ms: 120,
    },
    { text: 'the end', delay_ms: 120 },
  ],
};

describe('random SIGKILLs', () => {
  const seed = Number(process.env.RATCHET_CHAOS_SEED ?? 20261122);
  it(`loses and repeats nothing (seed ${seed})`, async () => {
    const reference = await referenceRun(longScript, 'chaos');
    const next = random(seed);
    const harness = track(new TestHarness({ script: longScript }));
    const { runId, sessionId } = await harness.engine.startRun({ input: 'chaos' });
    let kills = 0;
    for (; kills < 4; kills += 1) {
      const worker = harness.spawnWorker();
      await waitFor(() => worker.output().includes('worker started'), 20_000, 'the worker to start');
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(next() * 900)));
      const run = await harness.engine.getRun(runId);
      await worker.kill();
      if (run?.status === 'completed') break;
    }
    const last = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, last.output()).toBe('completed');
    await expectSameAsReference({ harness, runId, sessionId, kills }, reference);
    expect(new Set(harness.effects().map((effect) => effect.key)).size).toBe(1);
  });
});

describe('a zombie worker', () => {
  it('cannot write after its lock expired and another worker took over (fencing)', async () => {
    const script: Script = { replies: [{ text: 'slow reply', delay_ms: 2500 }] };
    const reference = await referenceRun(script, 'zombie');
    const harness = track(new TestHarness({ script }));
    const { runId, sessionId } = await harness.engine.startRun({ input: 'zombie' });
    const zombie = harness.spawnWorker();
    await waitFor(() => harness.modelCalls().length === 1, 20_000, 'the model call to start');
    zombie.child.kill('SIGSTOP');
    const rescuer = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    const eventsBefore = await harness.events(sessionId);
    zombie.child.kill('SIGCONT');
    await waitFor(
      () => zombie.output().includes('lost the job lock'),
      20_000,
      'the zombie to try its commit',
    );
    expect(await harness.events(sessionId)).toEqual(eventsBefore);
    await expectSameAsReference({ harness, runId, sessionId, kills: 1 }, reference);
    expect(harness.modelCalls()).toHaveLength(2);
  });
});

describe('SIGTERM', () => {
  it('lets an in-flight step finish within the deadline and exits 0', async () => {
    const harness = track(
      new TestHarness({ script: { replies: [{ text: 'finished in time', delay_ms: 800 }] } }),
    );
    const { runId } = await harness.engine.startRun({ input: 'graceful' });
    const worker = harness.spawnWorker();
    await waitFor(() => harness.modelCalls().length === 1, 20_000, 'the model call to start');
    worker.child.kill('SIGTERM');
    const exit = await waitForExit(worker, 15_000);
    expect(exit.code, worker.output()).toBe(0);
    expect((await harness.engine.getRun(runId))?.status).toBe('completed');
    expect(harness.modelCalls()).toHaveLength(1);
  });

  it('hands a step that outlives the deadline back to the queue, and another worker finishes it', async () => {
    const harness = track(
      new TestHarness({
        script: { replies: [{ text: 'slow', delay_ms: 4000 }] },
        worker: { shutdown_timeout_ms: 300 },
      }),
    );
    const { runId } = await harness.engine.startRun({ input: 'hand back' });
    const worker = harness.spawnWorker();
    await waitFor(() => harness.modelCalls().length === 1, 20_000, 'the model call to start');
    worker.child.kill('SIGTERM');
    const exit = await waitForExit(worker, 15_000);
    expect(exit.code, worker.output()).toBe(0);
    expect(worker.output()).toContain('handed back to the queue');
    // Handed back, not stalled: back in the queue for the next worker, not active until its lock expires.
    const counts = await harness.engine.queues.queue(0).getJobCounts('active', 'delayed', 'wait');
    expect(counts).toMatchObject({ active: 0 });
    expect((counts.delayed ?? 0) + (counts.wait ?? 0)).toBe(1);
    const next = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, next.output()).toBe('completed');
    expect(harness.modelCalls()).toHaveLength(2);
  });
});

describe('crash of the worker between two runs of one session', () => {
  it('keeps the chat of the session whole', async () => {
    const script: Script = {
      replies: [
        { text: 'first', tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] },
        { text: 'second' },
      ],
    };
    const outcome = await crashAndTakeOver(script, 'one', 'iteration.after_enqueue', track);
    const chat = await outcome.harness.transcript(outcome.sessionId);
    expect(chat.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});
