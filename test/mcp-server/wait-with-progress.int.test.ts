import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { waitWithProgress } from '../../src/mcp/server/wait-with-progress.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A run parked on a question: nothing happens until it is answered. */
async function waitingRun(h: Harness): Promise<string> {
  await h.startWorker();
  const { runId } = await h.engine.startRun({ input: 'paint it' });
  await waitFor(
    async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
    20_000,
    'the question',
  );
  return runId;
}

const askScript = {
  replies: [
    { text: 'asking', tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    { text: 'done' },
  ],
};

describe('waitWithProgress', () => {
  it('sends heartbeats while nothing happens, with increasing progress, until the timeout', async () => {
    harness = new Harness({ script: askScript });
    const runId = await waitingRun(harness);
    const reports: { progress: number; message: string }[] = [];
    const waited = await waitWithProgress(harness.engine, runId, {
      timeoutS: 0.7,
      signal: new AbortController().signal,
      report: async (progress, message) => {
        reports.push({ progress, message });
      },
      heartbeatMs: 100,
      logger: silentLogger(),
    });
    expect(waited.finished).toBe(false);
    expect(waited.run.status).toBe('waiting_input');
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(new Set(reports.map((report) => report.message))).toEqual(
      new Set(['waiting for the run to finish']),
    );
    expect(reports.map((report) => report.progress)).toEqual(reports.map((_, index) => index + 1));
  });

  it('ends the wait when the client goes away, reporting nothing more', async () => {
    harness = new Harness({ script: askScript });
    const runId = await waitingRun(harness);
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 200);
    const reports: string[] = [];
    const waited = await waitWithProgress(harness.engine, runId, {
      timeoutS: 120,
      signal: gone.signal,
      report: async (_progress, message) => {
        reports.push(message);
      },
      heartbeatMs: 60_000,
      logger: silentLogger(),
    });
    expect(waited).toMatchObject({ finished: false, run: { status: 'waiting_input' } });
    expect(reports).toEqual([]);
  });
});
