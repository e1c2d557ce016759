import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../helpers/harness.js';

// Durations past what one Node timer holds (2^31-1 ms, about 24.8 days) must work like short ones: a run
// allowed 30 days is not cut short at once.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const days = (count: number) => count * 86_400;

describe('long durations', () => {
  it('completes a run whose agent allows 30 days (options.timeout_s), through a real worker', async () => {
    harness = new Harness({
      script: { replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }] },
      agent: { options: { max_iterations: 5, timeout_s: days(30) } },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add them' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('three');
    // The deadline is 30 days out (created_at is taken a moment apart from it).
    const allowedMs = Date.parse(run.deadline_at ?? '') - Date.parse(run.created_at);
    expect(Math.abs(allowedMs - days(30) * 1000)).toBeLessThan(60_000);
    const kinds = (await harness.events(sessionId)).map((event) => event.kind);
    expect(kinds.at(-1)).toBe('run_completed');
  });

  it('completes a run that asks for 30 days itself (timeout_s of the run)', async () => {
    harness = new Harness({
      script: { replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }] },
      agent: { options: { max_iterations: 5, timeout_s: days(365) } },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'go', timeoutS: days(30) });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('three');
  });

  it('refuses, in the engine itself, a run timeout past 365 days or not a whole number, and stores nothing', async () => {
    harness = new Harness({ script: { replies: [{ text: 'done' }] } });
    for (const timeoutS of [days(365) + 1, 1e12, 1e20, Number.POSITIVE_INFINITY, Number.NaN, 1.5, 0]) {
      await expect(harness.engine.startRun({ input: 'go', timeoutS })).rejects.toMatchObject({
        code: 'invalid_run_settings',
        message: expect.stringContaining('31536000 (365 days)'),
      });
    }
    expect(await harness.redis.keys(`${harness.prefix}:*session*`)).toEqual([]);
  });

  it('answers a model asking a person to wait past 365 days (ask_user timeout_s) with an error naming the limit', async () => {
    harness = new Harness({
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'ask_user', arguments: { question: 'Which?', timeout_s: 1e20, default: 'either' } },
            ],
          },
          { text: 'asked too much' },
        ],
      },
      agent: { options: { max_iterations: 5 } },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'ask' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const end = (await harness.events(sessionId)).find((event) => event.kind === 'tool_call_end');
    expect(end?.kind === 'tool_call_end' && end.data.is_error).toBe(true);
    expect(end?.kind === 'tool_call_end' && end.data.content).toContain('timeout_s');
    expect(end?.kind === 'tool_call_end' && end.data.content).toContain('31536000 (365 days)');
    expect(await harness.engine.listQuestions(sessionId)).toEqual([]);
  });
});
