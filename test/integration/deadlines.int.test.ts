import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

// options.timeout_s bounds a whole run, its child runs included: past the deadline the run fails with
// deadline_exceeded, and what is in flight (a model call, a tool handler) is aborted whichever worker holds it.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function failedWith(h: Harness, runId: string, timeoutMs = 20_000) {
  const run = await h.engine.waitForRun(runId, { timeoutMs });
  expect(run.status).toBe('failed');
  expect(run.error?.code).toBe('deadline_exceeded');
  return run;
}

describe('run deadlines', () => {
  it('aborts a model call that outlasts the deadline and fails the run', async () => {
    harness = new Harness({
      script: { replies: [{ text: 'too late', delay_ms: 30_000 }] },
      agent: { options: { max_iterations: 5, timeout_s: 1 } },
    });
    await harness.startWorker();
    const started = Date.now();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await failedWith(harness, runId);
    // The 30 s call was cut at the deadline, not waited for.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.deadline_at).not.toBeNull();
    const kinds = (await harness.events(sessionId)).map((event) => event.kind);
    expect(kinds.slice(-2)).toEqual(['agent_end', 'run_failed']);
    expect(kinds.filter((kind) => kind === 'run_failed')).toHaveLength(1);
  });

  it('aborts the model call on the worker process that holds it, which stays free for other runs', async () => {
    harness = new Harness({
      script: {
        rules: [{ when: { contains: 'quick' }, reply: { text: 'fast' } }],
        replies: [{ text: 'too late', delay_ms: 30_000 }],
      },
      agent: { options: { max_iterations: 5, timeout_s: 2 } },
    });
    // No worker in this process: the step runs on a worker of its own process.
    const worker = harness.spawnWorker();
    await waitFor(() => worker.output().includes('worker started'), 60_000, 'the worker process');
    const started = Date.now();
    const { runId } = await harness.engine.startRun({ input: 'go' });
    await waitFor(() => harness?.modelCalls().length === 1, 30_000, 'the model call to start');
    await failedWith(harness, runId, 30_000);
    // The 30 s call was cut at the 2 s deadline, not waited for (generous: the machine may be busy).
    expect(Date.now() - started).toBeLessThan(25_000);
    // The same process goes on working: its slot was freed at the deadline, not after the 30 s call.
    const next = await harness.engine.startRun({ input: 'a quick one' });
    const done = await harness.engine.waitForRun(next.runId, { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    expect(done.result).toBe('fast');
    expect(worker.child.exitCode).toBeNull();
    expect(worker.output()).toContain('deadline_exceeded');
  });

  it('aborts a tool handler in flight: the call gets an error result and the run fails', async () => {
    const script: Script = {
      replies: [
        { tool_calls: [{ name: 'slow_echo', arguments: { text: 'hi', delay_ms: 30_000 } }] },
        { text: 'never reached' },
      ],
    };
    harness = new Harness({ script, agent: { options: { max_iterations: 5, timeout_s: 1 } } });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    await failedWith(harness, runId);
    const end = (await harness.events(sessionId)).find((event) => event.kind === 'tool_call_end');
    expect(end?.kind === 'tool_call_end' && end.data.is_error).toBe(true);
    // The model was called once: the run did not go on after its deadline.
    expect(harness.modelCalls()).toHaveLength(1);
  });

  it('fails a run that waits for a person past its deadline (the parked step wakes at the deadline)', async () => {
    const script: Script = {
      replies: [
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
        { text: 'ok' },
      ],
    };
    harness = new Harness({
      script,
      agent: { options: { max_iterations: 5, timeout_s: 2 } },
      // The safety-net recheck is long: only the deadline can wake the step in time.
      worker: { question_recheck_ms: 60_000 },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'paint it' });
    await waitFor(
      async () => (await harness?.engine.getRun(runId))?.status === 'waiting_input',
      10_000,
      'the question',
    );
    await failedWith(harness, runId);
    expect(await harness.engine.listQuestions(sessionId)).toEqual([]);
  });

  it('takes a shorter timeout for one run, and refuses a longer one than the agent allows', async () => {
    harness = new Harness({
      script: { replies: [{ text: 'slow', delay_ms: 30_000 }] },
      agent: { options: { max_iterations: 5, timeout_s: 600 } },
    });
    await harness.startWorker();
    await expect(harness.engine.startRun({ input: 'go', timeoutS: 601 })).rejects.toMatchObject({
      code: 'invalid_run_settings',
      message: expect.stringContaining('timeout_s'),
    });
    const { runId } = await harness.engine.startRun({ input: 'go', timeoutS: 1 });
    await failedWith(harness, runId);
  });

  it('gives a child run its parent deadline, so the whole tree stops', async () => {
    harness = new Harness({
      agents: [
        {
          name: 'lead',
          options: { timeout_s: 2 },
          script: {
            replies: [
              {
                tool_calls: [
                  { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'take your time' } },
                ],
              },
              { text: 'done' },
            ],
          },
        },
        { name: 'helper', script: { replies: [{ text: 'slow answer', delay_ms: 30_000 }] } },
      ],
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await failedWith(harness, runId);
    const events = await harness.events(sessionId);
    const child = events.find((event) => event.kind === 'agent_start' && event.agent === 'helper');
    expect(child).toBeDefined();
    const childRun = await harness.engine.getRun(child?.run_id ?? '');
    expect(childRun?.deadline_at).toBe(run.deadline_at);
    expect(childRun?.status).toBe('failed');
    expect(childRun?.error?.code).toBe('deadline_exceeded');
  });
});

describe('run logging', () => {
  it("logs each run's start and end with its run id, status and duration, and agent_end carries the duration", async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = { write: (line: string) => lines.push(JSON.parse(line)) };
    harness = new Harness({ script: { replies: [{ text: 'done' }] } });
    await harness.startWorker({ logger: createLogger({ level: 'info', destination }) });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    const started = lines.filter((line) => line.msg === 'agent run started' && line.run_id === runId);
    const ended = lines.filter((line) => line.msg === 'agent run ended' && line.run_id === runId);
    expect(started).toHaveLength(1);
    expect(ended).toEqual([
      expect.objectContaining({ agent: 'agent', status: 'completed', duration_ms: expect.any(Number) }),
    ]);
    const end = (await harness.events(sessionId)).find((event) => event.kind === 'agent_end');
    expect(end?.kind === 'agent_end' && end.data.duration_ms).toEqual(expect.any(Number));
  });
});
