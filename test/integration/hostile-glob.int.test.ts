import { afterEach, describe, expect, it } from 'vitest';
import { toolResultsOf } from '../../src/chat/index.js';
import { watchEventLoop } from '../helpers/event-loop-gaps.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Backtracks for seconds per name as a RegExp over the long names below. */
const hostile = `${'*a'.repeat(12)}b`;
const longName = 'a'.repeat(32);
const matchingName = `${'a'.repeat(31)}b`;

describe('a hostile model cannot stall a worker with a glob', () => {
  it('glob and grep with a backtracking glob over long names: right results, the event loop keeps turning', async () => {
    harness = new Harness({
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'write_file', arguments: { path: longName, content: 'needle\n' } },
              { name: 'write_file', arguments: { path: matchingName, content: 'needle\n' } },
            ],
          },
          { tool_calls: [{ name: 'glob', arguments: { pattern: hostile } }] },
          { tool_calls: [{ name: 'grep', arguments: { pattern: 'needle', include: hostile } }] },
          { text: 'done' },
        ],
      },
      agent: { toolboxes: ['filesystem', 'search'] },
      config: { tools: { workspace: 'workspace' } },
    });
    // The worker runs in this process: a blocked loop shows as a long gap between ticks.
    await harness.startWorker();
    const loop = watchEventLoop();
    let longestGap = 0;
    try {
      const { runId, sessionId } = await harness.engine.startRun({ input: 'find the file' });
      const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
      expect(run.status).toBe('completed');
      const outcomes = (await harness.transcript(sessionId)).flatMap((message) => toolResultsOf(message));
      const [, , glob, grep] = outcomes;
      expect(JSON.parse(glob?.content ?? '')).toEqual({ paths: [matchingName] });
      expect(JSON.parse(grep?.content ?? '')).toEqual({
        matches: [{ path: matchingName, line: 1, text: 'needle' }],
      });
      // Each call ran once: a stalled job would have been taken over and run again.
      const events = await harness.events(sessionId);
      expect(events.filter((event) => event.kind === 'tool_call_end')).toHaveLength(4);
    } finally {
      longestGap = loop.stop();
    }
    // Generous: a glob compiled to a RegExp held the loop for seconds here.
    expect(longestGap).toBeLessThan(1_000);
  });
});
