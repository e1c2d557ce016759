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
