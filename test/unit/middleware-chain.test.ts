import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { extensionContext } from '../../src/extensions/context.js';
import {
  defineMiddleware,
  type ModelReply,
  type ModelRequest,
  refuse,
} from '../../src/extensions/middleware.js';
import { runModelChain, runToolChain } from '../../src/extensions/middleware-chain.js';

const step = { sessionId: 's', runId: 'r', agent: 'a', iteration: 0, now: '2026-01-01T00:00:00.000Z' };
const contextOf = (name: string) => extensionContext(name, step);
const base = { signal: new AbortController().signal, logger: pino({ level: 'silent' }) };
const request: ModelRequest = { provider: 'big', messages: [], tools: [], options: {} };
const usage = { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, requests: 1 };
const model = async (sent: ModelRequest): Promise<ModelReply> => ({
  parts: [{ type: 'text', text: `from ${sent.provider}` }],
  usage,
  provider: sent.provider,
  model: `${sent.provider}-model`,
});

const router = defineMiddleware({
  name: 'router',
  options: z.strictObject({ to: z.string() }),
  async aroundModelCall(call, next) {
    call.record({ chose: call.options.to });
    return next({ ...call.request, provider: call.options.to });
  },
});
const upper = defineMiddleware({
  name: 'upper',
  async aroundModelCall(call, next) {
    const reply = await next(call.request);
    return {
      ...reply,
      parts: reply.parts.map((part) =>
        part.type === 'text' ? { ...part, text: part.text.toUpperCase() } : part,
      ),
    };
  },
});

describe('runModelChain', () => {
  it('runs middleware in the order listed, the first outermost, and records what each decided', async () => {
    const outcome = await runModelChain(
      [
        { definition: upper, options: {} },
        { definition: router, options: { to: 'small' } },
      ],
      request,
      model,
      contextOf,
      base,
    );
    expect(outcome.kind).toBe('reply');
    if (outcome.kind !== 'reply') return;
    expect(outcome.reply.parts).toEqual([{ type: 'text', text: 'FROM SMALL' }]);
    expect(outcome.decisions).toEqual([
      { name: 'upper', reply_changed: true },
      { name: 'router', note: { chose: 'small' }, routed_to: 'small' },
    ]);
  });

  it('reports a refusal with the middleware that made it', async () => {
    const guard = defineMiddleware({
      name: 'guard',
      aroundModelCall: async () => refuse('no model calls today'),
    });
    const outcome = await runModelChain(
      [{ definition: guard, options: {} }],
      request,
      model,
      contextOf,
      base,
    );
    expect(outcome).toMatchObject({ kind: 'refused', by: 'guard', reason: 'no model calls today' });
    expect(outcome.decisions).toEqual([{ name: 'guard', refused: 'no model calls today' }]);
  });

  it("fails with middleware_failed naming the middleware that threw, and lets next's errors through", async () => {
    const broken = defineMiddleware({
      name: 'broken',
      aroundModelCall: async () => {
        throw new Error('oops');
      },
    });
    await expect(
      runModelChain([{ definition: broken, options: {} }], request, model, contextOf, base),
    ).rejects.toMatchObject({
      code: 'middleware_failed',
      message: 'middleware "broken" failed: oops',
    });
    const failing = async (): Promise<ModelReply> => {
      throw new Error('provider down');
    };
    await expect(
      runModelChain([{ definition: upper, options: {} }], request, failing, contextOf, base),
    ).rejects.toThrow('provider down');
    await expect(
      runModelChain(
        [
          { definition: upper, options: {} },
          { definition: broken, options: {} },
        ],
        request,
        model,
        contextOf,
        base,
      ),
    ).rejects.toMatchObject({ message: 'middleware "broken" failed: oops' });
  });

  it('refuses a note over its size limit', async () => {
    const chatty = defineMiddleware({
      name: 'chatty',
      async aroundModelCall(call, next) {
        call.record('x'.repeat(5_000));
        return next(call.request);
      },
    });
    await expect(
      runModelChain([{ definition: chatty, options: {} }], request, model, contextOf, base),
    ).rejects.toMatchObject({
      code: 'middleware_failed',
    });
  });
});

describe('runToolChain', () => {
  it('changes arguments and results, and records the change', async () => {
    const redact = defineMiddleware({
      name: 'redact',
      async aroundToolCall(call, next) {
        const result = await next({ ...call.request, arguments: '{}' });
        return { ...result, content: result.content.replace('secret', '[redacted]') };
      },
    });
    const outcome = await runToolChain(
      [{ definition: redact, options: {} }],
      { name: 'echo', arguments: '{"a":1}', toolCallId: 'c1' },
      async (sent) => ({ content: `secret ${sent.arguments}`, isError: false }),
      contextOf,
      base,
    );
    expect(outcome).toEqual({
      kind: 'reply',
      reply: { content: '[redacted] {}', isError: false },
      decisions: [{ name: 'redact', request_changed: true, reply_changed: true }],
    });
  });
});

describe('a middleware that never settles and ignores its signal', () => {
  const stuck = defineMiddleware({
    name: 'stuck',
    aroundModelCall: () => new Promise<never>(() => {}),
    aroundToolCall: () => new Promise<never>(() => {}),
  });
  const outer = defineMiddleware({
    name: 'outer',
    aroundModelCall: (call, next) => next(call.request),
    aroundToolCall: (call, next) => next(call.request),
  });
  const layers = [
    { definition: outer, options: {} },
    { definition: stuck, options: {} },
  ];

  it("ends the chain when the step's signal aborts, with the signal's reason as it is", async () => {
    for (const reason of [new Error('the run passed its deadline'), 'run r was cancelled']) {
      const step = new AbortController();
      const stepBase = { ...base, signal: step.signal };
      const modelCall = runModelChain(layers, request, model, contextOf, stepBase).catch((e: unknown) => e);
      const toolCall = runToolChain(
        layers,
        { name: 'echo', arguments: '{}', toolCallId: 'c1' },
        async () => ({ content: 'never reached', isError: false }),
        contextOf,
        stepBase,
      ).catch((e: unknown) => e);
      step.abort(reason);
      expect(await modelCall).toBe(reason);
      expect(await toolCall).toBe(reason);
    }
  });

  it('ends at once when the signal aborted before the call', async () => {
    const step = new AbortController();
    step.abort('worker shutting down');
    await expect(
      runModelChain(layers, request, model, contextOf, { ...base, signal: step.signal }),
    ).rejects.toBe('worker shutting down');
  });

  it('takes the outcome of a middleware written in JavaScript without async (a plain value)', async () => {
    const reply: ModelReply = {
      parts: [{ type: 'text', text: 'plain' }],
      usage,
      provider: 'big',
      model: 'm',
    };
    const plain = defineMiddleware({
      name: 'plain',
      aroundModelCall: (() => reply) as unknown as () => Promise<ModelReply>,
    });
    const outcome = await runModelChain(
      [{ definition: plain, options: {} }],
      request,
      model,
      contextOf,
      base,
    );
    expect(outcome).toMatchObject({ kind: 'reply', reply: { parts: [{ type: 'text', text: 'plain' }] } });
  });
});
