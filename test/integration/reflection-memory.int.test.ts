import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { redisMemory } from '../../src/redis/memory-store.js';
import { redactedMark } from '../../src/secrets/redactor.js';
import { readMemory } from '../../src/tools/builtin/memory/memory-notes.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';
import { journalEntry } from '../helpers/journal-entry.js';

// Reflections that last (decision 0044): the reflection effect with save_to_memory keeps the agent's answer
// to its prompt as the memory note `reflection`, so the agent's next session starts with it; redacted and
// bounded like every note, and written once whatever crashes.
const harnesses: Harness[] = [];
const track = (harness: Harness) => harnesses.push(harness);
afterEach(async () => {
  await Promise.allSettled(harnesses.splice(0).map((harness) => harness.close()));
});

const token = 'reflect-token-0123456789abcdef';
const lesson = `Reflection: explode always fails (it said ${token}); next time I use add instead.`;
/** Session one: two failures, the reflection prompt, the answer to it; session two: one answer. */
const script: Script = {
  replies: [
    { tool_calls: [{ name: 'explode', arguments: { message: 'first' } }] },
    { tool_calls: [{ name: 'explode', arguments: { message: 'second' } }] },
    { text: lesson },
    { text: 'I remember.' },
  ],
};
const options = (maxNoteChars = 4_000): Omit<HarnessOptions, 'script'> => ({
  agent: {
    toolboxes: ['test', 'memory'],
    effects: [{ kind: 'reflection', params: { failure_threshold: 2, save_to_memory: true } }],
  },
  // A registered secret (loading the config registers the API's tokens in this process and its workers).
  config: { api: { tokens: [token] }, tools: { memory: { max_note_chars: maxNoteChars } } },
});

async function notes(harness: Harness) {
  const store = redisMemory(harness.redis, { prefix: harness.prefix, shards: 1 });
  return readMemory(store, 'agent', new Date());
}

describe('the reflection effect with save_to_memory', () => {
  it("keeps the reflection in the agent's memory, redacted, and the next session starts with it", async () => {
    const harness = new Harness({ ...options(), script });
    track(harness);
    await harness.startWorker();
    const first = await harness.engine.startRun({ input: 'explode twice' });
    expect((await harness.engine.waitForRun(first.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    // The reflection prompt came before the third request; its answer is the note.
    const calls = harness.modelCalls();
    expect(calls[2]?.messages.at(-1)?.text).toContain('stop and reflect');
    const entry = await journalEntry(harness, first.sessionId, first.runId, 'reply:3');
    expect(entry.after.decisions).toEqual([
      { effect: 'reflection', remember: { name: 'reflection', content: lesson } },
    ]);
    const kept = await notes(harness);
    expect(kept.map((note) => [note.name, note.content])).toEqual([
      ['reflection', lesson.replace(token, redactedMark)],
    ]);
    expect(kept[0]?.content).not.toContain(token);

    const second = await harness.engine.startRun({ input: 'what did you learn?' });
    expect(second.sessionId).not.toBe(first.sessionId);
    expect((await harness.engine.waitForRun(second.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const system = harness.modelCalls()[3]?.system ?? '';
    expect(system).toContain('next time I use add instead.');
    expect(system).not.toContain(token);
  });

  it('is held to the memory note length, and is not kept without save_to_memory', async () => {
    const harness = new Harness({ ...options(40), script });
    track(harness);
    await harness.startWorker();
    const run = await harness.engine.startRun({ input: 'explode twice' });
    expect((await harness.engine.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const [note] = await notes(harness);
    expect(note?.content.length).toBe(40);
    expect(note?.content).toMatch(/more characters left out\]$/);

    const plain = new Harness({
      script,
      agent: {
        toolboxes: ['test', 'memory'],
        effects: [{ kind: 'reflection', params: { failure_threshold: 2 } }],
      },
    });
    track(plain);
    await plain.startWorker();
    const unsaved = await plain.engine.startRun({ input: 'explode twice' });
    expect((await plain.engine.waitForRun(unsaved.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect(await notes(plain)).toEqual([]);
  });

  it('writes the note once when the worker dies after the reply that finishes the run is recorded', async () => {
    const harness = new Harness({ ...options(), script });
    track(harness);
    const { runId } = await harness.engine.startRun({ input: 'explode twice' });
    const doomed = harness.spawnWorker({ crashAt: 'iteration.after_commit@3' });
    const exit = await waitForExit(doomed, 30_000);
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    // The reply that finished the run is committed; the note was not written before the kill.
    expect((await harness.engine.getRun(runId))?.status).toBe('completed');
    expect(await notes(harness)).toEqual([]);
    // The step is taken over: its run is finished, and the note its reply asked for is written.
    const rescuer = harness.spawnWorker();
    await waitUntil(async () => (await notes(harness)).length > 0, 45_000, rescuer.output);
    const stopped = await rescuer.stop();
    expect(stopped.code, rescuer.output()).toBe(0);
    const kept = await notes(harness);
    expect(kept.map((note) => [note.name, note.run_id])).toEqual([['reflection', runId]]);
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
