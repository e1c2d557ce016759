import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { outputGuardrailSchema, timeoutMiddlewareSchema } from '../../src/config/index.js';
import { RatchetError, Suspension } from '../../src/errors/index.js';
import { extensionContext } from '../../src/extensions/context.js';
import {
  defineMiddleware,
  type ModelReply,
  type ModelRequest,
  rejectAnswer,
  type ToolRequest,
  type ToolResult,
} from '../../src/extensions/middleware.js';
import { runModelChain, runToolChain } from '../../src/extensions/middleware-chain.js';
import {
  loggerMiddleware,
  outputGuardrailMiddleware,
  recoveryMiddleware,
  timeoutMiddleware,
} from '../../src/workflows/core/middleware/index.js';

const step = { sessionId: 's', runId: 'r', agent: 'a', iteration: 0, now: '2026-01-01T00:00:00.000Z' };
const contextOf = (name: string) => extensionContext(name, step);
const silent = pino({ level: 'silent' });
const base = (signal = new AbortController().signal, logger = silent) => ({ signal, logger });
const request: ModelRequest = { provider: 'p', messages: [], tools: [], options: {} };
const usage = { input_tokens: 3, output_tokens: 4, cached_input_tokens: 0, requests: 1 };
const answering = (text: string) => async (): Promise<ModelReply> => ({
  parts: [{ type: 'text', text }],
  usage,
  provider: 'p',
  model: 'm',
});
const callingTools = async (): Promise<ModelReply> => ({
  parts: [{ type: 'tool_call', id: 'c1', name: 'lookup', arguments: '{}' }],
  usage,
  provider: 'p',
  model: 'm',
});
const toolRequest: ToolRequest = { name: 'lookup', arguments: '{}', toolCallId: 'c1' };

/** A call that ends only when its signal aborts, with the signal's reason. */
function untilAborted<T>(seen: AbortSignal[]) {
  return (_request: unknown, signal: AbortSignal): Promise<T> => {
    seen.push(signal);
    return new Promise<T>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  };
}

describe('output_guardrail (a built-in middleware)', () => {
  const guardrail = (options: unknown) => [
    { definition: outputGuardrailMiddleware, options: outputGuardrailSchema.parse(options) },
  ];

  it('lets a passing final answer through and rejects a failing one with its reason and retries', async () => {
    const config = { deny: ['secret'], on_fail: 'retry', max_retries: 3 };
    const passed = await runModelChain(guardrail(config), request, answering('fine'), contextOf, base());
    expect(passed).toMatchObject({ kind: 'reply', decisions: [] });
    const rejected = await runModelChain(
      guardrail(config),
      request,
      answering('a secret'),
      contextOf,
      base(),
    );
    expect(rejected).toMatchObject({
      kind: 'rejected',
      by: 'output_guardrail',
      check: 'output_guardrail',
      reason: 'the answer matches the denied pattern /secret/',
      maxRetries: 3,
      reply: { parts: [{ type: 'text', text: 'a secret' }] },
      decisions: [{ name: 'output_guardrail', rejected: 'the answer matches the denied pattern /secret/' }],
    });
    // on_fail: fail allows no retry.
    const failing = await runModelChain(
      guardrail({ deny: ['secret'] }),
      request,
      answering('a secret'),
      contextOf,
      base(),
    );
    expect(failing).toMatchObject({ kind: 'rejected', maxRetries: 0 });
  });

  it('does not check a reply with tool calls', async () => {
    const outcome = await runModelChain(
      guardrail({ max_length: 1 }),
      request,
      callingTools,
      contextOf,
      base(),
    );
    expect(outcome.kind).toBe('reply');
  });
});

describe('rejectAnswer (a middleware of the user)', () => {
  it('passes the rejection out through the middleware around it, with the answer it rejected', async () => {
    const seenByOuter: string[] = [];
    const outer = defineMiddleware({
      name: 'outer',
      async aroundModelCall(call, next) {
        try {
          return await next(call.request);
        } catch (error) {
          seenByOuter.push(String(error));
          throw error;
        }
      },
    });
    const judge = defineMiddleware({
      name: 'judge',
      async aroundModelCall(call, next) {
        await next(call.request);
        return rejectAnswer('not polite', { maxRetries: 2 });
      },
    });
    const outcome = await runModelChain(
      [
        { definition: outer, options: {} },
        { definition: judge, options: {} },
      ],
      request,
      answering('go away'),
      contextOf,
      base(),
    );
    expect(outcome).toMatchObject({ kind: 'rejected', by: 'judge', check: 'judge', maxRetries: 2 });
    expect(seenByOuter).toEqual([expect.stringContaining('not polite')]);
  });

  it('is a failure of the middleware for a reply with tool calls, or without calling next', async () => {
    const eager = defineMiddleware({
      name: 'eager',
      async aroundModelCall() {
        return rejectAnswer('no');
      },
    });
    const late = defineMiddleware({
      name: 'late',
      async aroundModelCall(call, next) {
        await next(call.request);
        return rejectAnswer('no');
      },
    });
    await expect(
      runModelChain([{ definition: eager, options: {} }], request, answering('x'), contextOf, base()),
    ).rejects.toMatchObject({
      code: 'middleware_failed',
      message: expect.stringContaining('without calling next'),
    });
    await expect(
      runModelChain([{ definition: late, options: {} }], request, callingTools, contextOf, base()),
    ).rejects.toMatchObject({ code: 'middleware_failed', message: expect.stringContaining('tool calls') });
  });
});

describe('timeout (a built-in middleware)', () => {
  const timeout = (options: unknown) => [
    { definition: timeoutMiddleware, options: timeoutMiddlewareSchema.parse(options) },
  ];

  it('aborts a model call past model_call_s (its signal fires) and fails it as model_timeout, retried', async () => {
    const seen: AbortSignal[] = [];
    const error = await runModelChain(
      timeout({ model_call_s: 0.05 }),
      request,
      untilAborted<ModelReply>(seen),
      contextOf,
      base(),
    ).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RatchetError);
    expect(error).toMatchObject({ code: 'model_timeout', retryable: true });
    expect(seen[0]?.aborted).toBe(true);
  });

  it('gives the model an error result for a tool call past tool_call_s, even if the tool ignores its signal', async () => {
    const ignoring = () => new Promise<ToolResult>(() => {});
    const outcome = await runToolChain(
      timeout({ tool_call_s: 0.05 }),
      toolRequest,
      ignoring,
      contextOf,
      base(),
    );
    expect(outcome).toMatchObject({
      kind: 'reply',
      reply: { isError: true, content: expect.stringContaining('took longer than 0.05 s') },
    });
  });

  it("lets the step's own abort (shutdown, cancellation, the run's deadline) pass as it is", async () => {
    const step = new AbortController();
    const seen: AbortSignal[] = [];
    const pending = runModelChain(
      timeout({ model_call_s: 60 }),
      request,
      untilAborted<ModelReply>(seen),
      contextOf,
      base(step.signal),
    ).catch((thrown: unknown) => thrown);
    await expect.poll(() => seen.length).toBe(1);
    step.abort(new RatchetError('cancelled', 'the run was cancelled'));
    expect(await pending).toMatchObject({ code: 'cancelled' });
  });

  it('fails a model call past model_call_s as model_timeout when what is inside never settles and ignores its signal', async () => {
    const stuck = defineMiddleware({ name: 'stuck', aroundModelCall: () => new Promise<never>(() => {}) });
    const ignoring = () => new Promise<ModelReply>(() => {});
    for (const [inside, model] of [
      [[{ definition: stuck, options: {} }], answering('never sent')],
      [[], ignoring],
    ] as const) {
      const error = await runModelChain(
        [...timeout({ model_call_s: 0.05 }), ...inside],
        request,
        model,
        contextOf,
        base(),
      ).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ code: 'model_timeout' });
    }
  });

  it('needs at least one limit', () => {
    expect(timeoutMiddlewareSchema.safeParse({}).success).toBe(false);
  });
});

describe('logger (a built-in middleware)', () => {
  it('logs each model and tool call with its figures and no content, and a failed call as a warning', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const logged = [{ definition: loggerMiddleware, options: { level: 'info' } }];
    await runModelChain(logged, request, answering('the secret answer'), contextOf, base(undefined, logger));
    await runToolChain(
      logged,
      toolRequest,
      async () => ({ content: 'found it', isError: false }),
      contextOf,
      base(undefined, logger),
    );
    await runToolChain(
      logged,
      toolRequest,
      async () => {
        throw new Error('disk gone');
      },
      contextOf,
      base(undefined, logger),
    ).catch(() => undefined);
    expect(lines).toMatchObject([
      { msg: 'model call finished', middleware: 'logger', model: 'm', input_tokens: 3, output_tokens: 4 },
      { msg: 'tool call finished', tool: 'lookup', is_error: false, result_chars: 8 },
      { msg: 'tool call failed', level: 40, tool: 'lookup' },
    ]);
    expect(JSON.stringify(lines)).not.toContain('the secret answer');
  });
});

describe('recovery (a built-in middleware)', () => {
  const broken = defineMiddleware({
    name: 'broken',
    async aroundToolCall() {
      throw new Error('bug in a middleware');
    },
  });

  it('turns a failure inside it into an error result the model reads', async () => {
    const outcome = await runToolChain(
      [
        { definition: recoveryMiddleware, options: {} },
        { definition: broken, options: {} },
      ],
      toolRequest,
      async () => ({ content: 'ok', isError: false }),
      contextOf,
      base(),
    );
    expect(outcome).toMatchObject({
      kind: 'reply',
      reply: { isError: true, content: expect.stringContaining('bug in a middleware') },
    });
  });

  it('lets a handler that waits for an answer, and an aborted step, pass through', async () => {
    const waiting = async (): Promise<ToolResult> => {
      throw new Suspension(Date.now() + 1_000, 'an answer');
    };
    const recovered = [{ definition: recoveryMiddleware, options: {} }];
    await expect(runToolChain(recovered, toolRequest, waiting, contextOf, base())).rejects.toBeInstanceOf(
      Suspension,
    );
    const step = new AbortController();
    step.abort();
    const failing = async (): Promise<ToolResult> => {
      throw new Error('aborted');
    };
    await expect(runToolChain(recovered, toolRequest, failing, contextOf, base(step.signal))).rejects.toThrow(
      'aborted',
    );
  });
});
