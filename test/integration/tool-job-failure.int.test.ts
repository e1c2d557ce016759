import { afterEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
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

/**
 * A tool job that kills every worker taking it is failed for good by BullMQ (max_stalled_count 1). Its
 * iteration must not wait for ever: the next iteration appends an error result for it (the fallback path),
 * and a crash during that append, at either side of its commit, changes nothing.
 */
describe('a tool job that fails for good', () => {
  it.each([[''], ['iteration.before_results_commit'], ['iteration.after_results_commit']])(
    'gives the model an error result and the run goes on (crash at "%s")',
    async (fallbackCrash) => {
      harness = new Harness({ script, worker: { max_stalled_count: 1, concurrency: 1 } });
      const { runId, sessionId } = await harness.engine.startRun({ input: 'poison' });
      for (let stalls = 0; stalls < 2; stalls += 1) {
        const doomed = harness.spawnWorker({ crashAt: 'tool.before_intent' });
        const exit = await waitForExit(doomed, 30_000);
        expect(exit.signal, doomed.output()).toBe('SIGKILL');
      }
      if (fallbackCrash) {
        const doomed = harness.spawnWorker({ crashAt: fallbackCrash });
        const exit = await waitForExit(doomed, 30_000);
        expect(exit.signal, doomed.output()).toBe('SIGKILL');
        expect(doomed.output()).toContain(`crash point ${fallbackCrash} reached`);
      }
      const last = harness.spawnWorker();
      const run = await harness.engine.waitForRun(runId, { timeoutMs: 45_000 });
      expect(run.status, last.output()).toBe('completed');
      expect(run.result).toBe('went on without it');
      const chat = await harness.transcript(sessionId);
      expect(chat.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(toolResultsOf(chat[2] ?? { parts: [] })[0]).toMatchObject({
        is_error: true,
        content: expect.stringMatching(/could not be completed \(its job failed after all retries\)/),
      });
      const events = await harness.events(sessionId);
      const added = events.flatMap((event) => (event.kind === 'message_added' ? [event.data.index] : []));
      expect(added).toEqual([0, 1, 2, 3]);
    },
  );
});
