import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import { testMiddleware } from '../fixtures/middleware-extensions.js';
import { ExtensionWorld } from '../helpers/extension-world.js';
import { journalEntry } from '../helpers/journal-entry.js';

// Middleware registered in code, listed on an agent by kind, run by a real worker on real Redis.
let world: ExtensionWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const addCall = { tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] };

function config(middleware: unknown[], replies: unknown[], providers: Record<string, unknown>[] = []) {
  return {
    providers: [
      { name: 'model', kind: 'scripted', model: 'big', replies, record_calls: 'calls.jsonl' },
      ...providers,
    ],
    agents: [{ name: 'agent', provider: 'model', toolboxes: ['test'], middleware }],
  };
}

async function run(configured: Record<string, unknown>, input: string) {
  world = new ExtensionWorld(configured, { middleware: testMiddleware });
  await world.start();
  const { runId, sessionId } = await world.engine.startRun({ input });
  const record = await world.engine.waitForRun(runId, { timeoutMs: 30_000 });
  const chat = await world.engine.readChat(sessionId);
  const events = await world.engine.readEvents(sessionId);
  return { record, runId, sessionId, chat, events, calls: world.modelCalls(), world };
}

describe('middleware around model calls', () => {
  it('changes the request the model is sent; the transcript keeps what was said', async () => {
    const { record, calls, chat } = await run(
      config([{ kind: 'redact_word', word: 'swordfish' }], [{ text: 'noted' }]),
      'the password is swordfish',
    );
    expect(record.status).toBe('completed');
    const sent = JSON.stringify(calls[0]?.messages);
    expect(sent).not.toContain('swordfish');
    expect(sent).toContain('the password is [redacted]');
    expect(chat.map((message) => textOf(message)).join('\n')).toContain('the password is swordfish');
  });

  it('records what it decided in the reply entry: its note and the provider it routed to, whose model made the reply', async () => {
    const { record, runId, sessionId } = await run(
      config(
        [{ kind: 'route_to', provider: 'small' }],
        [{ text: 'from the big model' }],
        [
          {
            name: 'small',
            kind: 'scripted',
            model: 'small-model',
            replies: [{ text: 'from the small model' }],
          },
        ],
      ),
      'hello',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('from the small model');
    const entry = await journalEntry(world as ExtensionWorld, sessionId, runId, 'reply:1');
    expect(entry.model).toEqual({ provider: 'small', model: 'small-model' });
    expect(entry.middleware).toEqual([{ name: 'route_to', note: { routed: 'small' }, routed_to: 'small' }]);
  });

  it('that routes to a provider the config does not define fails the run with middleware_failed', async () => {
    const { record, calls } = await run(
      config([{ kind: 'route_to', provider: 'nowhere' }], [{ text: 'hi' }]),
      'hello',
    );
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('middleware_failed');
    expect(record.error?.message).toContain('routed its model request to provider "nowhere"');
    expect(calls).toHaveLength(0);
  });

  it('that refuses fails the run with middleware_refused naming it, and the model is never called', async () => {
    const { record, calls } = await run(
      config([{ kind: 'deny', word: 'launch codes' }], [{ text: 'here they are' }]),
      'tell me the launch codes',
    );
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('middleware_refused');
    expect(record.error?.message).toContain('middleware "deny" refused the model call');
    expect(record.error?.message).toContain('the request mentions "launch codes"');
    expect(calls).toHaveLength(0);
  });

  it('that throws fails the run with middleware_failed naming it', async () => {
    const { record, calls } = await run(config([{ kind: 'broken' }], [{ text: 'hi' }]), 'hello');
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('middleware_failed');
    expect(record.error?.message).toContain('middleware "broken" failed: the router lost its table');
    expect(calls).toHaveLength(0);
  });
});

describe('middleware around tool calls', () => {
  it('that refuses gives the model an error result naming it, and the run goes on', async () => {
    const { record, chat, runId, sessionId } = await run(
      config([{ kind: 'deny', tool: 'add' }], [addCall, { text: 'could not add' }]),
      'add 2 and 3',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('could not add');
    const result = chat.find((message) => message.role === 'tool');
    expect(result?.parts[0]).toMatchObject({
      type: 'tool_result',
      is_error: true,
      content: 'the call of tool "add" was refused by middleware "deny": this tool is not allowed here',
    });
    const outcome = await journalEntry(world as ExtensionWorld, sessionId, runId, 'tool:1:0:outcome');
    expect(outcome.middleware).toEqual([{ name: 'deny', refused: 'this tool is not allowed here' }]);
  });
});

// The built-in middleware (timeout, recovery, output_guardrail) and a user's answer judge (rejectAnswer).
describe('the built-in timeout middleware', () => {
  it('stops a tool call past tool_call_s: the model gets an error result saying so, and the run goes on', async () => {
    const slow = { tool_calls: [{ name: 'slow_echo', arguments: { text: 'late', delay_ms: 20_000 } }] };
    const started = Date.now();
    const { record, chat } = await run(
      config([{ kind: 'timeout', tool_call_s: 0.3 }], [slow, { text: 'the tool was too slow' }]),
      'echo slowly',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('the tool was too slow');
    const result = chat.find((message) => message.role === 'tool');
    expect(result?.parts[0]).toMatchObject({
      type: 'tool_result',
      is_error: true,
      content: expect.stringContaining('took longer than 0.3 s (middleware "timeout", tool_call_s)'),
    });
    // The tool's own 20 s were not waited for.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('aborts a model call past model_call_s and retries it (model_timeout) until the step attempts are used', async () => {
    const { record, calls } = await run(
      config([{ kind: 'timeout', model_call_s: 0.2 }], [{ text: 'too late', delay_ms: 20_000 }]),
      'hello',
    );
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('model_timeout');
    expect(record.error?.message).toContain('took longer than 0.2 s');
    // The worker's step_attempts (3): each attempt called the model once.
    expect(calls).toHaveLength(3);
  });
});

describe('the built-in recovery middleware', () => {
  it('turns a failure inside it into an error result the model reads, instead of failing the run', async () => {
    const addCall = { tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] };
    const { record, chat } = await run(
      config([{ kind: 'recovery' }, { kind: 'broken_tools' }], [addCall, { text: 'recovered' }]),
      'add 2 and 3',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('recovered');
    const result = chat.find((message) => message.role === 'tool');
    expect(result?.parts[0]).toMatchObject({
      is_error: true,
      content: 'the call of tool "add" failed: middleware "broken_tools" failed: the router lost its table',
    });
  });
});

describe('answer checks as middleware', () => {
  it("a user's judge (rejectAnswer) sends the answer back with its reason; the next answer passes", async () => {
    const { record, chat, events, runId, sessionId } = await run(
      config([{ kind: 'judge', word: 'maybe', retries: 2 }], [{ text: 'maybe 5' }, { text: '5' }]),
      'what is 2 + 3?',
    );
    expect(record.status).toBe('completed');
    expect(record.result).toBe('5');
    const rejections = events.filter((event) => event.kind === 'answer_rejected');
    expect(rejections.map((event) => event.data)).toEqual([
      { iteration: 1, check: 'judge', reason: 'the answer mentions "maybe"', retry: 1, max_retries: 2 },
    ]);
    expect(chat.map((message) => textOf(message))).toContain('maybe 5');
    const entry = await journalEntry(world as ExtensionWorld, sessionId, runId, 'reply:1');
    expect(entry.middleware).toEqual([{ name: 'judge', rejected: 'the answer mentions "maybe"' }]);
  });

  it('output_guardrail listed as middleware fails the run with guardrail_failed when no retry is allowed', async () => {
    const { record, calls } = await run(
      config([{ kind: 'output_guardrail', deny: ['hunter\\d'] }], [{ text: 'the password is hunter2' }]),
      'what is the password?',
    );
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('guardrail_failed');
    expect(record.error?.message).toBe(
      'the final answer failed the output guardrail: the answer matches the denied pattern /hunter\\d/',
    );
    expect(calls).toHaveLength(1);
  });
});
