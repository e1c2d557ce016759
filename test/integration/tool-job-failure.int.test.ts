import { afterEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { stepJobId } from '../../src/workflows/ids.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const script: Script = {
  replies: [
    { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { text: 'went on without it' },
  ],
};

/** Runs a worker that dies at `point`, when one is given. */
async function crashAt(current: Harness, point: string): Promise<void> {
  if (!point) return;
  const crashed = current.spawnWorker({ crashAt: point });
  expect((await waitForExit(crashed, 30_000)).signal, crashed.output()).toBe('SIGKILL');
  expect(crashed.output()).toContain(`crash point ${point} reached`);
}

/** The run went on past the call: an error result for it, then the final answer, each message added once. */
async function expectWentOnWithError(
  current: Harness,
  ids: { runId: string; sessionId: string },
  content: RegExp,
): Promise<void> {
  const last = current.spawnWorker();
  const run = await current.engine.waitForRun(ids.runId, { timeoutMs: 45_000 });
  expect(run.status, last.output()).toBe('completed');
  expect(run.result).toBe('went on without it');
  const chat = await current.transcript(ids.sessionId);
  expect(chat.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  expect(toolResultsOf(chat[2] ?? { parts: [] })[0]).toMatchObject({
    is_error: true,
    content: expect.stringMatching(content),
  });
  const events = await current.events(ids.sessionId);
  const added = events.flatMap((event) => (event.kind === 'message_added' ? [event.data.index] : []));
  expect(added).toEqual([0, 1, 2, 3]);
}

/**
 * A tool job that kills every worker taking it is cut short more often than `max_stalled_count` allows. It
 * must not leave its run waiting for ever: the next worker to take it fails it through the tool step,
 * which records an error result and adds the next iteration. A crash between that record and the next
 * iteration's enqueue changes nothing (BullMQ's own stall limit leaves room for it).
 */
describe('a tool job that fails for good', () => {
  it.each([[''], ['tool.before_next_iteration']])(
    'gives the model an error result and the run goes on (crash at "%s")',
    async (failCrash) => {
      harness = new Harness({ script, worker: { max_stalled_count: 1, concurrency: 1 } });
      const { runId, sessionId } = await harness.engine.startRun({ input: 'poison' });
      for (let stalls = 0; stalls < 2; stalls += 1) {
        const doomed = harness.spawnWorker({ crashAt: 'tool.before_intent' });
        const exit = await waitForExit(doomed, 30_000);
        expect(exit.signal, doomed.output()).toBe('SIGKILL');
      }
      await crashAt(harness, failCrash);
      await expectWentOnWithError(
        harness,
        { runId, sessionId },
        /^the call of tool "add" could not be completed: the step was cut short 2 times/,
      );
    },
  );
});

/**
 * The iteration's own results commit is the fallback for calls that left no outcome: a tool job lost from
 * the queue (deleted by an operator, or failed by BullMQ past every stall allowance) and the run driven on
 * by hand. The next iteration reports the missing call as an error result, and a crash at either side of
 * that commit changes nothing.
 */
describe('an iteration driven on after its tool job was lost', () => {
  it.each([[''], ['iteration.before_results_commit'], ['iteration.after_results_commit']])(
    'appends an error result for the lost call (crash at "%s")',
    async (fallbackCrash) => {
      harness = new Harness({ script, worker: { concurrency: 1 } });
      const { runId, sessionId } = await harness.engine.startRun({ input: 'lost' });
      const doomed = harness.spawnWorker({ crashAt: 'tool.before_intent' });
      expect((await waitForExit(doomed, 30_000)).signal, doomed.output()).toBe('SIGKILL');
      const queue = harness.engine.queues.queue(0);
      const toolJobId = stepJobId.tool(runId, 1, 0);
      // The dead worker's lock expires, then the job can be removed.
      await expect
        .poll(() => queue.remove(toolJobId).catch(() => 0), { timeout: 10_000, interval: 250 })
        .toBe(1);
      const run = await harness.engine.getRun(runId);
      await harness.engine.queues.addIteration(0, {
        v: 2,
        session_id: sessionId,
        run_id: runId,
        agent: run?.agent ?? 'agent',
        chat_id: 'main',
        iteration: 2,
        previous_calls: 1,
      });
      await crashAt(harness, fallbackCrash);
      await expectWentOnWithError(
        harness,
        { runId, sessionId },
        /could not be completed \(its job ended without an outcome\)/,
      );
    },
  );
});

/** An iteration that kills every worker taking it fails its run, with the reason recorded: no run hangs. */
describe('an iteration job that stalls too often', () => {
  it('fails its run with step_stalled', async () => {
    harness = new Harness({ script, worker: { max_stalled_count: 1, concurrency: 1 } });
    const { runId } = await harness.engine.startRun({ input: 'poison' });
    for (let stalls = 0; stalls < 2; stalls += 1) {
      const doomed = harness.spawnWorker({ crashAt: 'iteration.before_model_call' });
      expect((await waitForExit(doomed, 30_000)).signal, doomed.output()).toBe('SIGKILL');
    }
    const last = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 45_000 });
    expect(run.status, last.output()).toBe('failed');
    expect(run.error).toMatchObject({
      code: 'step_stalled',
      message: expect.stringMatching(/^the step was cut short 2 times/),
    });
  });
});
