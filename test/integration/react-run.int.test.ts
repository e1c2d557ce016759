import { afterEach, describe, expect, it } from 'vitest';
import { textOf, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function runToEnd(script: Script, input = 'go', options: { maxIterations?: number } = {}) {
  harness = new Harness({ script, ...options });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
  return {
    run,
    runId,
    sessionId,
    harness,
    chat: await harness.transcript(sessionId),
    events: await harness.events(sessionId),
  };
}

describe('a ReAct run', () => {
  it('completes several tool-calling iterations with the expected transcript', async () => {
    const { run, chat, events } = await runToEnd({
      replies: [
        { text: 'adding', tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
        { text: 'again', tool_calls: [{ name: 'add', arguments: { a: 5, b: 10 } }] },
        { text: 'The answer is 15.' },
      ],
    });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('The answer is 15.');
    expect(run.iteration).toBe(3);
    expect(run.usage.requests).toBe(3);
    expect(chat.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(toolResultsOf(chat[2] ?? { parts: [] })[0]).toMatchObject({
      content: '{"sum":5}',
      is_error: false,
    });
    expect(toolResultsOf(chat[4] ?? { parts: [] })[0]).toMatchObject({
      content: '{"sum":15}',
      is_error: false,
    });
    expect(textOf(chat[5] ?? { parts: [] })).toBe('The answer is 15.');
    expect(events.map((event) => event.kind)).toEqual([
      'run_started',
      'agent_start',
      'message_added',
      'message_added',
      'tool_call_start',
      'tool_call_end',
      'message_added',
      'message_added',
      'tool_call_start',
      'tool_call_end',
      'message_added',
      'message_added',
      'agent_end',
      'run_completed',
    ]);
    // message_added indexes are the chat positions, in order.
    const indexes = events.flatMap((event) => (event.kind === 'message_added' ? [event.data.index] : []));
    expect(indexes).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('runs parallel tool calls concurrently and appends their results in call order', async () => {
    const { run, chat, events } = await runToEnd({
      replies: [
        {
          tool_calls: [
            { name: 'slow_echo', arguments: { text: 'first (slow)', delay_ms: 600 } },
            { name: 'slow_echo', arguments: { text: 'second (fast)', delay_ms: 10 } },
            { name: 'add', arguments: { a: 1, b: 1 } },
          ],
        },
        { text: 'done' },
      ],
    });
    expect(run.status).toBe('completed');
    const results = chat
      .filter((message) => message.role === 'tool')
      .map((message) => toolResultsOf(message)[0]?.content);
    expect(results).toEqual(['first (slow)', 'second (fast)', '{"sum":2}']);
    // The fast calls finished before the slow one: they really ran in parallel.
    const ends = events.flatMap((event) => (event.kind === 'tool_call_end' ? [event.data.content] : []));
    expect(ends.indexOf('first (slow)')).toBe(2);
  });

  it('turns bad arguments, unknown tools and throwing handlers into error results the model sees', async () => {
    const { run, chat } = await runToEnd({
      replies: [
        {
          tool_calls: [
            { name: 'add', arguments_raw: '{"a": 1, "b": ' },
            { name: 'add', arguments: { a: 'one', b: 2 } },
            { name: 'teleport', arguments: {} },
            { name: 'explode', arguments: { message: 'kaboom' } },
            { name: 'add', arguments: { a: 1, b: 2 } },
          ],
        },
        { text: 'recovered' },
      ],
    });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('recovered');
    const results = chat
      .filter((message) => message.role === 'tool')
      .map((message) => toolResultsOf(message)[0]);
    expect(results.map((result) => result?.is_error)).toEqual([true, true, true, true, false]);
    expect(results[0]?.content).toMatch(/invalid arguments for tool "add": not valid JSON/);
    expect(results[1]?.content).toMatch(/invalid arguments for tool "add": a: .*expected number/);
    expect(results[2]?.content).toMatch(/unknown tool "teleport"\. Available tools: .*add/);
    expect(results[3]?.content).toBe('tool "explode" failed: kaboom');
    expect(results[4]?.content).toBe('{"sum":3}');
  });

  it('fails the run with a clear reason at max_iterations', async () => {
    const loop = { tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] };
    const { run, chat, events } = await runToEnd({ replies: [loop, loop, loop, loop, loop] }, 'loop', {
      maxIterations: 3,
    });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('max_iterations');
    expect(run.error?.message).toMatch(/max_iterations \(3\)/);
    expect(run.iteration).toBe(3);
    // The third reply's tool call is not run: nothing would read its result.
    expect(chat.filter((message) => message.role === 'tool')).toHaveLength(2);
    expect(events.at(-1)?.kind).toBe('run_failed');
  });

  it('retries a failing model and goes on when it recovers', async () => {
    const {
      run,
      events,
      harness: h,
    } = await runToEnd({
      replies: [
        {
          text: 'after two failures',
          fail: [
            { kind: 'server_error', status: 503 },
            { kind: 'rate_limit', retry_after_ms: 100 },
          ],
        },
      ],
    });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('after two failures');
    expect(h.modelCalls()).toHaveLength(3);
    const errors = events.filter((event) => event.kind === 'error');
    expect(
      errors.map(
        (event) => event.kind === 'error' && [event.data.code, event.data.attempt, event.data.final],
      ),
    ).toEqual([
      ['model_server_error', 1, false],
      ['model_rate_limited', 2, false],
    ]);
  });

  it('fails the run cleanly when the model keeps failing', async () => {
    const {
      run,
      events,
      chat,
      harness: h,
    } = await runToEnd({
      replies: [
        {
          text: 'never',
          fail: [{ kind: 'server_error' }, { kind: 'server_error' }, { kind: 'server_error' }],
        },
      ],
    });
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ code: 'model_server_error', message: expect.stringMatching(/500/) });
    expect(h.modelCalls()).toHaveLength(3);
    expect(chat).toHaveLength(1);
    expect(events.at(-1)?.kind).toBe('run_failed');
    expect(events.filter((event) => event.kind === 'run_failed')).toHaveLength(1);
  });

  it('fails at once on a permanent model error', async () => {
    const { run, harness: h } = await runToEnd({ replies: [{ text: 'never', fail: [{ kind: 'auth' }] }] });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('model_auth_failed');
    expect(h.modelCalls()).toHaveLength(1);
  });

  it('continues the chat of a session in its next run', async () => {
    harness = new Harness({ script: { replies: [{ text: 'first answer' }, { text: 'second answer' }] } });
    await harness.startWorker();
    const first = await harness.engine.startRun({ input: 'one' });
    await harness.engine.waitForRun(first.runId);
    const second = await harness.engine.startRun({ input: 'two', sessionId: first.sessionId });
    const run = await harness.engine.waitForRun(second.runId);
    expect(run.result).toBe('second answer');
    const chat = await harness.transcript(first.sessionId);
    expect(chat.map(textOf)).toEqual(['one', 'first answer', 'two', 'second answer']);
  });

  it('refuses a second active run on one session', async () => {
    harness = new Harness({ script: { replies: [{ text: 'slow', delay_ms: 1000 }] } });
    const first = await harness.engine.startRun({ input: 'one' });
    await expect(harness.engine.startRun({ input: 'two', sessionId: first.sessionId })).rejects.toMatchObject(
      {
        code: 'session_busy',
        details: { active_run_id: first.runId },
      },
    );
  });
});

describe('usage in events', () => {
  it('each reply carries its own request usage in its message (and so in its message_added event)', async () => {
    const { events } = await runToEnd({
      replies: [
        {
          tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
          usage: { input_tokens: 30, output_tokens: 4 },
        },
        { text: 'two', usage: { input_tokens: 50, output_tokens: 2 } },
      ],
    });
    const replies = events.flatMap((event) =>
      event.kind === 'message_added' && event.data.message.role === 'assistant'
        ? [event.data.message.metadata]
        : [],
    );
    expect(replies.map((metadata) => metadata.usage)).toEqual([
      { input_tokens: 30, output_tokens: 4, cached_input_tokens: 0, requests: 1 },
      { input_tokens: 50, output_tokens: 2, cached_input_tokens: 0, requests: 1 },
    ]);
  });
});

describe('provider retries', () => {
  it('rate_limit.max_retries of the provider decides how often its errors are retried', async () => {
    const failing = { kind: 'server_error' as const, status: 503 };
    harness = new Harness({
      script: { replies: [{ text: 'never', fail: [failing, failing, failing, failing] }] },
      provider: { rate_limit: { max_retries: 1, base_delay_ms: 10 } },
      worker: { step_attempts: 4 },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'model_server_error', message: expect.stringMatching(/503/) });
    // One request and one retry, although the worker would allow four attempts.
    expect(harness.modelCalls()).toHaveLength(2);
  });
});
