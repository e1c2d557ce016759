import { Writable } from 'node:stream';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/index.js';
import { createSdkCompleter } from '../../../src/models/providers/index.js';
import { addTool, neverAborted, requestOf, userMessage } from './provider-fixtures.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

/** A model that records its calls and answers from what the test gives it. */
function stubModel(reply: {
  generate?: Partial<LanguageModelV4GenerateResult>;
  stream?: LanguageModelV4StreamPart[];
}): LanguageModelV4 & { calls: LanguageModelV4CallOptions[] } {
  const calls: LanguageModelV4CallOptions[] = [];
  return {
    specificationVersion: 'v4',
    provider: 'stub',
    modelId: 'stub-1',
    supportedUrls: {},
    calls,
    async doGenerate(options) {
      calls.push(options);
      return {
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
        ...reply.generate,
      };
    },
    async doStream(options) {
      calls.push(options);
      const parts = reply.stream ?? [];
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

function capturedLogger(): {
  logger: ReturnType<typeof createLogger>;
  lines: () => Record<string, unknown>[];
} {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  const logger = createLogger({ level: 'warn', destination });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const options = (model: LanguageModelV4, logger = createLogger({ level: 'silent' })) => ({
  provider: { name: 'stubby', kind: 'stub' },
  model,
  defaults: { temperature: 0.4, maxTokens: 100 },
  timeoutMs: 5000,
  logger,
});

describe('createSdkCompleter', () => {
  it('makes one doGenerate call with the tools as definitions, never to be executed by the SDK', async () => {
    const model = stubModel({});
    await createSdkCompleter(options(model)).complete(
      requestOf([userMessage('Hi')], { options: { maxTokens: 7 } }),
      neverAborted(),
    );
    expect(model.calls).toHaveLength(1);
    const [call] = model.calls;
    expect(call?.tools).toEqual([
      { type: 'function', name: 'add', description: addTool.description, inputSchema: addTool.inputSchema },
    ]);
    expect(call?.toolChoice).toEqual({ type: 'auto' });
    expect(call?.temperature).toBe(0.4);
    expect(call?.maxOutputTokens).toBe(7);
    expect(call?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('logs each distinct warning of the provider package once', async () => {
    const { logger, lines } = capturedLogger();
    const warning = {
      type: 'unsupported' as const,
      feature: 'temperature',
      details: 'not for reasoning models',
    };
    const completer = createSdkCompleter(options(stubModel({ generate: { warnings: [warning] } }), logger));
    await completer.complete(requestOf([userMessage('Hi')]), neverAborted());
    await completer.complete(requestOf([userMessage('Hi again')]), neverAborted());
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({ provider: 'stubby', warning });
  });

  it('a failing delta listener is logged and never fails the request', async () => {
    const { logger, lines } = capturedLogger();
    const model = stubModel({
      stream: [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'a' },
        { type: 'text-delta', id: 't', delta: 'b' },
        { type: 'text-end', id: 't' },
        { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'end_turn' } },
      ],
    });
    let calls = 0;
    const completion = await createSdkCompleter(options(model, logger)).complete(
      requestOf([userMessage('Hi')], {
        onTextDelta: () => {
          calls += 1;
          throw new Error('event log is down');
        },
      }),
      neverAborted(),
    );
    expect(completion.parts).toEqual([{ type: 'text', text: 'ab' }]);
    expect(calls).toBe(1);
    expect(lines()).toHaveLength(1);
  });

  it('keeps the order of text and tool calls, and leaves reasoning and provider-run tools out', async () => {
    const model = stubModel({
      generate: {
        content: [
          { type: 'reasoning', text: 'thinking...' },
          { type: 'text', text: 'First ' },
          { type: 'text', text: 'part.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":1}' },
          {
            type: 'tool-call',
            toolCallId: 's1',
            toolName: 'web_search',
            input: '{}',
            providerExecuted: true,
          },
          { type: 'text', text: 'After.' },
        ],
      },
    });
    const completion = await createSdkCompleter(options(model)).complete(
      requestOf([userMessage('Hi')]),
      neverAborted(),
    );
    expect(completion.parts).toEqual([
      { type: 'text', text: 'First part.' },
      { type: 'tool_call', id: 'c1', name: 'add', arguments: '{"a":1}' },
      { type: 'text', text: 'After.' },
    ]);
  });
});
