import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import { RatchetError } from '../../src/errors/index.js';
import { createScriptedCompleter, type Script } from '../../src/models/scripted/index.js';
import { assistant, neverAborted, request, system, toolResult, user } from './chat-builder.js';

const additionScript: Script = {
  replies: [
    { text: 'Let me add those.', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { text: 'The sum is 3.' },
    { text: 'Hello again.' },
  ],
};

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('scripted model: replies in order', () => {
  it('picks the reply by the number of assistant messages, across runs of one chat', async () => {
    const model = createScriptedCompleter(additionScript);
    const first = [system('You add numbers.'), user('1 + 2?')];
    expect((await model.complete(request(first), neverAborted())).parts).toEqual([
      { type: 'text', text: 'Let me add those.' },
      { type: 'tool_call', id: 'call_0_0', name: 'add', arguments: '{"a":1,"b":2}' },
    ]);

    const second = [...first, assistant('Let me add those.'), toolResult('call_0_0', '3')];
    expect((await model.complete(request(second), neverAborted())).parts).toEqual([
      { type: 'text', text: 'The sum is 3.' },
    ]);

    const nextRun = [...second, assistant('The sum is 3.'), user('Hi')];
    expect((await model.complete(request(nextRun, { runId: 'run_2' }), neverAborted())).parts).toEqual([
      { type: 'text', text: 'Hello again.' },
    ]);
  });

  it('gives the same reply to the same request from separate instances (no in-process state)', async () => {
    const chat = [system('s'), user('1 + 2?')];
    const once = await createScriptedCompleter(additionScript).complete(request(chat), neverAborted());
    const model = createScriptedCompleter(additionScript);
    await model.complete(request(chat), neverAborted());
    const again = await model.complete(request(chat), neverAborted());
    expect(again).toEqual(once);
  });

  it('sends several tool calls in one reply: arguments as JSON, arguments_raw verbatim, given ids kept', async () => {
    const model = createScriptedCompleter({
      replies: [
        { text: 'first' },
        {
          tool_calls: [
            { name: 'add', arguments: { a: 1, b: [2, 3] } },
            { name: 'add', arguments_raw: '{not json', id: 'call_x' },
            { name: 'now' },
          ],
        },
      ],
    });
    const completion = await model.complete(
      request([user('go'), assistant('first'), user('more')]),
      neverAborted(),
    );
    expect(completion.parts).toEqual([
      { type: 'tool_call', id: 'call_1_0', name: 'add', arguments: '{"a":1,"b":[2,3]}' },
      { type: 'tool_call', id: 'call_x', name: 'add', arguments: '{not json' },
      { type: 'tool_call', id: 'call_1_2', name: 'now', arguments: '{}' },
    ]);
  });
});

describe('scripted model: rules', () => {
  const script: Script = {
    replies: [{ text: 'first' }, { text: 'second' }, { text: 'third' }],
    rules: [
      { when: { role: 'tool', contains: 'error' }, reply: { text: 'I saw an error' } },
      { when: { role: 'user', matches: '^stop\\b' }, reply: { text: 'Stopping.' } },
      { when: { contains: 'stop' }, reply: { text: 'any role saw stop' } },
    ],
  };
  const model = createScriptedCompleter(script);
  const textOf = async (messages: Parameters<typeof request>[0]) =>
    (await model.complete(request(messages), neverAborted())).parts;

  it('matches role and substring against the latest tool message', async () => {
    expect(
      await textOf([user('add'), assistant('first'), toolResult('call_0_0', 'error: no such file', true)]),
    ).toEqual([{ type: 'text', text: 'I saw an error' }]);
  });

  it('does not match a role other than the latest input message', async () => {
    expect(await textOf([user('show the error')])).toEqual([{ type: 'text', text: 'first' }]);
  });

  it('tests only the latest user or tool message, not earlier ones', async () => {
    const chat = [
      user('add'),
      assistant('first'),
      toolResult('call_0_0', 'error'),
      assistant('x'),
      user('thanks'),
    ];
    expect(await textOf(chat)).toEqual([{ type: 'text', text: 'third' }]);
  });

  it('matches a regular expression, and the first matching rule wins', async () => {
    expect(await textOf([user('stop now')])).toEqual([{ type: 'text', text: 'Stopping.' }]);
    expect(await textOf([user('please stop')])).toEqual([{ type: 'text', text: 'any role saw stop' }]);
    expect(await textOf([user('x'), assistant('first'), toolResult('call_0_0', 'stop')])).toEqual([
      { type: 'text', text: 'any role saw stop' },
    ]);
  });

  it('shares one counter with replies: a rule reply consumes a position', async () => {
    const chat = [user('stop'), assistant('Stopping.'), user('go on')];
    expect(await textOf(chat)).toEqual([{ type: 'text', text: 'second' }]);
  });

  it('ignores the assistant text when matching', async () => {
    expect(await textOf([user('go'), assistant('stop')])).toEqual([{ type: 'text', text: 'second' }]);
  });
});

describe('scripted model: running out', () => {
  it('uses the default once replies are exhausted', async () => {
    const model = createScriptedCompleter({ replies: [{ text: 'only' }], default: { text: 'fallback' } });
    const completion = await model.complete(
      request([user('a'), assistant('only'), user('b')]),
      neverAborted(),
    );
    expect(completion.parts).toEqual([{ type: 'text', text: 'fallback' }]);
  });

  it('throws a non-retryable script_exhausted error without a default', async () => {
    const model = createScriptedCompleter({ replies: [{ text: 'one' }, { text: 'two' }] });
    const chat = [user('a'), assistant('one'), user('b'), assistant('two'), user('c')];
    const error = await rejectionOf(model.complete(request(chat), neverAborted()));
    expect(error).toBeInstanceOf(RatchetError);
    expect(error).toMatchObject({ code: 'script_exhausted', retryable: false });
    expect((error as Error).message).toMatch(/has 2 replies and this is request 3/);
  });
});

describe('scripted model: injected failures', () => {
  const model = createScriptedCompleter({
    replies: [
      {
        text: 'finally',
        fail: [
          { kind: 'rate_limit', retry_after_ms: 100 },
          { kind: 'server_error', status: 503 },
          { kind: 'exception', message: 'boom' },
          { kind: 'auth' },
        ],
      },
    ],
  });
  const attempt = (number: number) =>
    model.complete(request([user('hi')], { attempt: number }), neverAborted());

  it('fails attempt k with fail[k-1], each kind with the error a provider would throw', async () => {
    expect(await rejectionOf(attempt(1))).toMatchObject({
      code: 'model_rate_limited',
      retryable: true,
      retryAfterMs: 100,
      message: expect.stringMatching(/^429 Too Many Requests/),
    });
    expect(await rejectionOf(attempt(2))).toMatchObject({
      code: 'model_server_error',
      retryable: true,
      message: expect.stringMatching(/^503 Service Unavailable/),
    });
    const exception = await rejectionOf(attempt(3));
    expect(exception).toBeInstanceOf(Error);
    expect(exception).not.toBeInstanceOf(RatchetError);
    expect((exception as Error).message).toBe('boom');
    expect(await rejectionOf(attempt(4))).toMatchObject({ code: 'model_auth_failed', retryable: false });
  });

  it('replies normally on attempts past the list, the same on every call', async () => {
    expect((await attempt(5)).parts).toEqual([{ type: 'text', text: 'finally' }]);
    expect(await rejectionOf(attempt(1))).toMatchObject({ code: 'model_rate_limited' });
  });

  it('applies to rule replies too', async () => {
    const ruled = createScriptedCompleter({
      rules: [{ when: { contains: 'x' }, reply: { text: 'ok', fail: [{ kind: 'server_error' }] } }],
    });
    const error = await rejectionOf(ruled.complete(request([user('x')]), neverAborted()));
    expect(error).toMatchObject({ code: 'model_server_error', message: expect.stringMatching(/^500 /) });
  });
});

describe('scripted model: delay and abort', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits delay_ms before replying', async () => {
    vi.useFakeTimers();
    const model = createScriptedCompleter({ replies: [{ text: 'late', delay_ms: 50 }] });
    let settled = false;
    const pending = model.complete(request([user('hi')]), neverAborted()).then((completion) => {
      settled = true;
      return completion;
    });
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect((await pending).parts).toEqual([{ type: 'text', text: 'late' }]);
  });

  it('rejects with the signal reason as soon as it aborts during the delay', async () => {
    vi.useFakeTimers();
    const model = createScriptedCompleter({ replies: [{ text: 'late', delay_ms: 60_000 }] });
    const controller = new AbortController();
    const pending = rejectionOf(model.complete(request([user('hi')]), controller.signal));
    await vi.advanceTimersByTimeAsync(10);
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once with an AbortError when the signal is already aborted', async () => {
    const model = createScriptedCompleter({ replies: [{ text: 'now' }] });
    const controller = new AbortController();
    controller.abort();
    const error = await rejectionOf(model.complete(request([user('hi')]), controller.signal));
    expect(error).toMatchObject({ name: 'AbortError' });
  });
});

describe('scripted model: usage', () => {
  it('reports the scripted usage, one request', async () => {
    const model = createScriptedCompleter({
      replies: [{ text: 'x', usage: { input_tokens: 10, output_tokens: 5 } }],
    });
    const completion = await model.complete(request([user('hi')]), neverAborted());
    expect(completion.usage).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cached_input_tokens: 0,
      requests: 1,
    });
  });

  it('estimates about four characters a token otherwise', async () => {
    const model = createScriptedCompleter({ replies: [{ text: 'abcdefgh' }] });
    const completion = await model.complete(request([system('12345678'), user('123456789')]), neverAborted());
    expect(completion.usage).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      cached_input_tokens: 0,
      requests: 1,
    });
  });
});

describe('scripted model: record_calls', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it('appends one JSON line per call (with the tools and system prompt sent), failed and exhausted calls included', async () => {
    directory = mkdtempSync(join(tmpdir(), 'ratchet-scripted-'));
    const file = join(directory, 'nested', 'calls.jsonl');
    const model = createScriptedCompleter(
      { replies: [{ text: 'ok', fail: [{ kind: 'server_error' }] }] },
      { recordCallsTo: file },
    );
    await rejectionOf(model.complete(request([user('a')], { attempt: 1 }), neverAborted()));
    await model.complete(request([user('a')], { attempt: 2 }), neverAborted());
    const withToolsAndSystem = {
      ...request([system('Be brief.'), user('a'), assistant('ok'), user('b')], { iteration: 2 }),
      tools: [{ name: 'add', description: 'Adds.', inputSchema: {} }],
    };
    await rejectionOf(model.complete(withToolsAndSystem, neverAborted()));

    const lines = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      {
        time: expect.any(String),
        pid: process.pid,
        session_id: 'session_1',
        run_id: 'run_1',
        agent: 'helper',
        iteration: 1,
        attempt: 1,
        position: 0,
        tools: [],
        system: '',
        messages: [{ id: expect.any(String), role: 'user', text: 'a' }],
      },
      {
        time: expect.any(String),
        pid: process.pid,
        session_id: 'session_1',
        run_id: 'run_1',
        agent: 'helper',
        iteration: 1,
        attempt: 2,
        position: 0,
        tools: [],
        system: '',
        messages: [{ id: expect.any(String), role: 'user', text: 'a' }],
      },
      {
        time: expect.any(String),
        pid: process.pid,
        session_id: 'session_1',
        run_id: 'run_1',
        agent: 'helper',
        iteration: 2,
        attempt: 1,
        position: 1,
        tools: ['add'],
        system: 'Be brief.',
        messages: [
          { id: expect.any(String), role: 'system', text: 'Be brief.' },
          { id: expect.any(String), role: 'user', text: 'a' },
          { id: expect.any(String), role: 'assistant', text: 'ok' },
          { id: expect.any(String), role: 'user', text: 'b' },
        ],
      },
    ]);
    expect(Number.isNaN(Date.parse(lines[0].time))).toBe(false);
  });
});

describe('scripted model: summaries and summarised chats', () => {
  it("answers a summary request with the script's summary (or a default), never with a reply of the script", async () => {
    const summaryRequest = {
      ...request([user('[0] user (user): hi\n\n[1] assistant (agent): hello')]),
      context: { ...request([]).context, purpose: 'summary' as const },
    };
    const plain = createScriptedCompleter({ replies: [{ text: 'first' }] });
    expect(textOf(await plain.complete(summaryRequest, neverAborted()))).toBe(
      'Scripted summary of 2 conversation entries.',
    );
    const own = createScriptedCompleter({
      replies: [{ text: 'first' }],
      summary: { text: 'all done so far' },
    });
    expect(textOf(await own.complete(summaryRequest, neverAborted()))).toBe('all done so far');
  });

  it('keeps its place in the script when a summary stands for earlier replies', async () => {
    const model = createScriptedCompleter({ replies: [{ text: 'r0' }, { text: 'r1' }, { text: 'r2' }] });
    const summary = { ...user('summary of the start'), metadata: { hidden_replies: 2 } };
    expect(textOf(await model.complete(request([summary, user('go on')]), neverAborted()))).toBe('r2');
  });
});

describe('scripted model: scripts built in code', () => {
  it('are validated like files', () => {
    expect(() =>
      createScriptedCompleter({ rules: [{ when: { matches: '(' }, reply: { text: 'x' } }] }),
    ).toThrow(/rules\[0\]\.when\.matches: not a valid regular expression/);
    expect(() => createScriptedCompleter({})).toThrow(/the script is empty/);
  });
});
