import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import { Harness } from '../helpers/harness.js';

// options.output_guardrail checks a run's final answer: on_fail fail ends the run with guardrail_failed;
// on_fail retry sends the answer back with the reason (a user message in the chat), at most max_retries times.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function withGuardrail(replies: string[], guardrail: Record<string, unknown>, maxIterations = 5) {
  return new Harness({
    script: { replies: replies.map((text) => ({ text })) },
    agent: { options: { max_iterations: maxIterations, output_guardrail: guardrail } },
  });
}

describe('output guardrail', () => {
  it('on_fail: retry sends a denied answer back with the reason, and the next answer ends the run', async () => {
    harness = withGuardrail(['the password is hunter2', 'I will not share it.'], {
      deny: ['hunter\\d'],
      on_fail: 'retry',
      max_retries: 2,
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'what is the password?' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('I will not share it.');
    const chat = await harness.transcript(sessionId);
    expect(chat.map((message) => [message.role, message.sender])).toEqual([
      ['user', 'user'],
      ['assistant', 'agent'],
      ['user', 'guardrail'],
      ['assistant', 'agent'],
    ]);
    expect(textOf(chat[2] ?? { parts: [] })).toContain('matches the denied pattern /hunter\\d/');
    // The answer was sent back before the second request (which is sent the whole chat).
    expect(harness.modelCalls().map((call) => call.iteration)).toEqual([1, 2]);
    expect(textOf(chat[2] ?? { parts: [] })).toContain('Your answer was not accepted');
    const events = await harness.events(sessionId);
    const kinds = events.map((event) => event.kind);
    expect(kinds.filter((kind) => kind === 'run_completed')).toHaveLength(1);
    // The rejection is an event of its own, in the commit of the rejected reply and just before it.
    const rejections = events.filter((event) => event.kind === 'answer_rejected');
    expect(rejections.map((event) => event.data)).toEqual([
      {
        iteration: 1,
        check: 'output_guardrail',
        reason: 'the answer matches the denied pattern /hunter\\d/',
        retry: 1,
        max_retries: 2,
      },
    ]);
    const rejectedAt = kinds.indexOf('answer_rejected');
    expect(events[rejectedAt + 1]).toMatchObject({
      kind: 'message_added',
      data: { message: { role: 'assistant', metadata: { iteration: 1 } } },
    });
  });

  it('fails the run with guardrail_failed once the retries are used up', async () => {
    harness = withGuardrail(['x'.repeat(50), 'y'.repeat(50), 'z'.repeat(50)], {
      max_length: 10,
      on_fail: 'retry',
      max_retries: 1,
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'be brief' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('guardrail_failed');
    expect(run.error?.message).toContain('after 1 retry');
    expect(harness.modelCalls()).toHaveLength(2);
    const roles = (await harness.transcript(sessionId)).map((message) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('on_fail: fail ends the run at the first answer that breaks a JSON Schema', async () => {
    harness = withGuardrail(['{"score": "high"}'], {
      json_schema: {
        type: 'object',
        required: ['score'],
        properties: { score: { type: 'number' } },
      },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'rate it' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'guardrail_failed' });
    expect(run.error?.message).toContain('JSON Schema');
  });

  it('accepts an answer that passes, and a hostile answer cannot hang the check', async () => {
    // A pattern that backtracks badly on a backtracking engine, against a long answer built for it.
    harness = withGuardrail([`${'a'.repeat(20_000)}!`], { deny: ['a*a*b'], max_length: 100_000 });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'say a lot' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
  });

  it('a worker SIGKILLed right after the answer was sent back repeats nothing', async () => {
    harness = withGuardrail(['the password is hunter2', 'I will not share it.'], {
      deny: ['hunter\\d'],
      on_fail: 'retry',
    });
    const first = harness.spawnWorker({ crashAt: 'iteration.after_commit@1' });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'what is the password?' });
    await first.exited;
    harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const chat = await harness.transcript(sessionId);
    expect(chat.filter((message) => message.sender === 'guardrail')).toHaveLength(1);
    expect(harness.modelCalls()).toHaveLength(2);
    const events = await harness.events(sessionId);
    expect(events.filter((event) => event.kind === 'answer_rejected')).toHaveLength(1);
  });

  it('a worker SIGKILLed before the rejected reply was committed announces the rejection once', async () => {
    harness = withGuardrail(['the password is hunter2', 'I will not share it.'], {
      deny: ['hunter\\d'],
      on_fail: 'retry',
    });
    const first = harness.spawnWorker({ crashAt: 'iteration.after_model_call@1' });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'what is the password?' });
    await first.exited;
    harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const rejections = (await harness.events(sessionId)).filter((event) => event.kind === 'answer_rejected');
    expect(rejections).toHaveLength(1);
    expect(rejections[0]?.data).toMatchObject({ iteration: 1, retry: 1, max_retries: 2 });
  });
});
