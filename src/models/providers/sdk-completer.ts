import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4FunctionTool,
  LanguageModelV4Text,
  LanguageModelV4Usage,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { RatchetError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import type { Completer, CompletionRequest } from '../completer.js';
import { replyChars, replyTooLarge } from '../reply-limit.js';
import { type ProviderIdentity, providerErrorOf } from './provider-error.js';
import { ReplyBodyTooLarge, ReplyStalled, watchModelCall } from './reply-fetch.js';
import { type SdkReply, toCompletion } from './to-completion.js';
import { toSdkPrompt } from './to-sdk-prompt.js';

export interface SdkCompleterOptions {
  provider: ProviderIdentity;
  /** A provider package's model (`createAnthropic(...)(modelId)`, ...). */
  model: LanguageModelV4;
  /** The provider entry's defaults; a request's own options win. */
  defaults: { temperature?: number; maxTokens?: number };
  timeoutMs: number;
  logger: Logger;
  /** Epoch milliseconds, to turn rate-limit reset times into durations. */
  now?: () => number;
  /**
   * When a request's responseFormat (structured output) is passed on: `always`; `without_tools`, for
   * providers whose structured output would take the place of tool calls (a forced JSON tool); `never`.
   */
  structuredOutput?: 'always' | 'without_tools' | 'never';
  /**
   * The most characters a reply may hold, text and tool arguments together (the entry's max_reply_chars): a
   * stream is cancelled as soon as its deltas go over it, and the body a `replyFetch` (reply-fetch.ts) reads
   * is cut off at its byte bound, so a runaway reply is never read whole.
   */
  maxReplyChars?: number;
}

/**
 * A Completer over an AI SDK provider model. Each `complete()` is exactly one HTTP request: it calls the
 * model's `doGenerate` (or `doStream` when the request wants text deltas) directly, not `generateText`,
 * which would retry on its own, run tools, loop over steps and validate tool arguments — all of which the
 * engine does itself, durably. Failures become RatchetErrors naming the provider (see providerErrorOf); a
 * request whose `replyFetch` found it stalled is model_stalled (retried, as a failed attempt).
 */
export function createSdkCompleter(options: SdkCompleterOptions): Completer {
  const { provider, model, defaults, timeoutMs, logger, structuredOutput, maxReplyChars } = options;
  const now = options.now ?? Date.now;
  const label = `${provider.kind} provider "${provider.name}"`;
  const warned = new Set<string>();
  const warn = (warnings: readonly SharedV4Warning[]): void => {
    for (const warning of warnings) {
      const key = JSON.stringify(warning);
      if (warned.has(key)) continue;
      warned.add(key);
      logger.warn({ provider: provider.name, warning }, 'the provider package warns about a request');
    }
  };

  return {
    async complete(request, signal) {
      signal.throwIfAborted();
      const deadline = startDeadline(signal, timeoutMs);
      const callOptions: LanguageModelV4CallOptions = {
        ...callOptionsOf(request, defaults, structuredOutput),
        abortSignal: deadline.signal,
      };
      try {
        const { onTextDelta } = request;
        // The fetch under the call watches its body for stalls (replyFetch): streamed or not decides how.
        const reply = await watchModelCall(onTextDelta !== undefined, () =>
          onTextDelta === undefined
            ? generate(model, callOptions, warn)
            : stream(model, callOptions, warn, deltaSink(onTextDelta, logger, provider), (chars) => {
                if (maxReplyChars !== undefined && chars > maxReplyChars)
                  throw replyTooLarge(
                    provider.name,
                    maxReplyChars,
                    `holds at least ${chars} characters (read up to there)`,
                  );
              }),
        );
        if (!reply.complete) {
          throw new RatchetError(
            'model_network_error',
            `${label}: the reply stream ended before the reply did`,
            {
              details: { provider: provider.name, kind: provider.kind },
            },
          );
        }
        const completion = toCompletion(reply, now());
        const chars = replyChars(completion.parts);
        if (maxReplyChars !== undefined && chars > maxReplyChars)
          throw replyTooLarge(provider.name, maxReplyChars, `holds ${chars} characters`);
        return completion;
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (error instanceof RatchetError && error.code === 'reply_too_large') throw error;
        const cutOff = causeOf(error, ReplyBodyTooLarge);
        if (cutOff) {
          throw replyTooLarge(
            provider.name,
            cutOff.maxReplyChars,
            `took more than ${cutOff.bytes} bytes on the wire`,
            error,
          );
        }
        const stalled = causeOf(error, ReplyStalled);
        if (stalled) {
          throw new RatchetError('model_stalled', `${label}: ${stalled.message}`, {
            cause: error,
            details: {
              provider: provider.name,
              kind: provider.kind,
              phase: stalled.phase,
              timeout_ms: stalled.timeoutMs,
            },
          });
        }
        if (deadline.timedOut()) {
          throw new RatchetError('model_network_error', `${label}: no reply within ${timeoutMs} ms`, {
            cause: error,
            details: { provider: provider.name, kind: provider.kind, timeout_ms: timeoutMs },
          });
        }
        throw providerErrorOf(error, provider, now());
      } finally {
        deadline.clear();
      }
    },
  };
}

function callOptionsOf(
  request: CompletionRequest,
  defaults: SdkCompleterOptions['defaults'],
  structuredOutput: NonNullable<SdkCompleterOptions['structuredOutput']> = 'never',
): LanguageModelV4CallOptions {
  const tools = request.tools.map(
    (tool): LanguageModelV4FunctionTool => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as LanguageModelV4FunctionTool['inputSchema'],
    }),
  );
  const format = request.options.responseFormat;
  return {
    prompt: toSdkPrompt(request.messages),
    ...(tools.length > 0 ? { tools, toolChoice: { type: 'auto' } } : {}),
    temperature: request.options.temperature ?? defaults.temperature,
    maxOutputTokens: request.options.maxTokens ?? defaults.maxTokens,
    ...(format &&
    (structuredOutput === 'always' || (structuredOutput === 'without_tools' && tools.length === 0))
      ? {
          responseFormat: {
            type: 'json',
            schema: format.schema as NonNullable<
              Extract<LanguageModelV4CallOptions['responseFormat'], { type: 'json' }>['schema']
            >,
            name: format.name,
          },
        }
      : {}),
  };
}

type Warn = (warnings: readonly SharedV4Warning[]) => void;

/** A reply as the provider package gave it; `complete` is false when a stream broke off before its end. */
type CollectedReply = SdkReply & { complete: boolean };

async function generate(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  warn: Warn,
): Promise<CollectedReply> {
  const result = await model.doGenerate(options);
  warn(result.warnings);
  return { content: result.content, usage: result.usage, headers: result.response?.headers, complete: true };
}

/**
 * Reads the whole stream, passing text deltas on, and collects the same content doGenerate would have
 * returned. A stream that ends without its finish (the connection dropped) is incomplete: the caller fails
 * the request rather than record half a reply.
 */
async function stream(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  warn: Warn,
  onTextDelta: (delta: string) => void,
  /** Told the reply's characters so far (text and tool arguments) after each piece; throws when over. */
  checkSize: (chars: number) => void,
): Promise<CollectedReply> {
  const result = await model.doStream(options);
  const reader = result.stream.getReader();
  const content: LanguageModelV4Content[] = [];
  const texts = new Map<string, LanguageModelV4Text>();
  const textBlock = (id: string): LanguageModelV4Text => {
    let block = texts.get(id);
    if (block === undefined) {
      block = { type: 'text', text: '' };
      texts.set(id, block);
      content.push(block);
    }
    return block;
  };
  let usage: LanguageModelV4Usage | undefined;
  let finished = false;
  let chars = 0;
  // Tool calls whose arguments came as deltas (counted then); the others are counted when they are whole.
  const streamedInputs = new Set<string>();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'stream-start':
          warn(part.warnings);
          break;
        case 'text-start':
          textBlock(part.id);
          break;
        case 'text-delta':
          chars += part.delta.length;
          checkSize(chars);
          textBlock(part.id).text += part.delta;
          if (part.delta !== '') onTextDelta(part.delta);
          break;
        case 'tool-input-delta':
          streamedInputs.add(part.id);
          chars += part.delta.length;
          checkSize(chars);
          break;
        case 'tool-call':
          chars += part.toolName.length + (streamedInputs.has(part.toolCallId) ? 0 : part.input.length);
          checkSize(chars);
          content.push(part);
          break;
        case 'finish':
          usage = part.usage;
          finished = isFinishSignal(part.finishReason);
          break;
        case 'error':
          throw part.error;
        default:
          break;
      }
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    throw error;
  }
  return { content, usage, headers: result.response?.headers, complete: finished };
}

/**
 * Whether the server ended the reply, rather than the connection: packages report a stream that stopped
 * without the server's end marker as "interrupted" (Anthropic, OpenAI, Gemini) or as "other" with no raw
 * reason (the chat-completions and xAI packages, whose finish reason stays at its initial value).
 */
function isFinishSignal(reason: LanguageModelV4FinishReason): boolean {
  if (reason.unified === 'interrupted' || reason.unified === 'error') return false;
  return !(reason.unified === 'other' && reason.raw === undefined);
}

/** Deltas are a preview: a failing listener is logged once and never fails the model request. */
function deltaSink(
  onTextDelta: (delta: string) => void,
  logger: Logger,
  provider: ProviderIdentity,
): (delta: string) => void {
  let failed = false;
  return (delta) => {
    if (failed) return;
    try {
      onTextDelta(delta);
    } catch (error) {
      failed = true;
      logger.warn({ provider: provider.name, err: error }, 'a text delta listener failed; no more deltas');
    }
  };
}

interface Deadline {
  /** Aborts when the caller's signal does or when the time is up. */
  signal: AbortSignal;
  timedOut(): boolean;
  clear(): void;
}

function startDeadline(outer: AbortSignal, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no reply within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear() {
      clearTimeout(timer);
      outer.removeEventListener('abort', onAbort);
    },
  };
}

/** The first error of `type` in the cause chain of `error` (provider packages wrap what their reader threw). */
function causeOf<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth += 1) {
    if (current instanceof type) return current;
    current = current.cause;
  }
  return undefined;
}
