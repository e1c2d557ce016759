import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createXai } from '@ai-sdk/xai';
import type { z } from 'zod';
import type { BaseProviderConfig, ProviderKind } from '../provider-registry.js';
import { DEFAULT_MAX_REPLY_CHARS } from '../reply-limit.js';
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type HostedProviderFields,
  hostedProviderFieldsSchema,
  type OpenAICompatibleFields,
  openaiCompatibleFieldsSchema,
  type SdkProviderFields,
} from './provider-fields.js';
import { replyFetch } from './reply-fetch.js';
import { createSdkCompleter, type SdkCompleterOptions } from './sdk-completer.js';

/** A kind whose completer is an AI SDK provider model; `createModel` builds the model from the entry. */
function sdkProviderKind<Fields extends SdkProviderFields>(
  fieldsSchema: z.ZodType<Fields>,
  /**
   * `fetch` reads reply bodies within the entry's max_reply_chars and aborts a request that stalls (its
   * first_token_timeout_ms, idle_timeout_ms): pass it to the package (replyFetch).
   */
  createModel: (config: BaseProviderConfig & Fields, fetch: typeof globalThis.fetch) => LanguageModelV4,
  structuredOutput: (config: BaseProviderConfig & Fields) => SdkCompleterOptions['structuredOutput'],
): ProviderKind<Fields> {
  return {
    fieldsSchema,
    create(config, { logger }) {
      const maxReplyChars = config.max_reply_chars ?? DEFAULT_MAX_REPLY_CHARS;
      return createSdkCompleter({
        provider: { name: config.name, kind: config.kind, baseUrl: config.base_url },
        model: createModel(
          config,
          replyFetch({
            maxReplyChars,
            firstTokenTimeoutMs: config.first_token_timeout_ms ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
            idleTimeoutMs: config.idle_timeout_ms ?? DEFAULT_IDLE_TIMEOUT_MS,
          }),
        ),
        maxReplyChars,
        defaults: { temperature: config.temperature, maxTokens: config.max_tokens },
        timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        logger,
        structuredOutput: structuredOutput(config),
      });
    },
  };
}

/** Anthropic's Messages API (`<base_url>/messages`; base_url defaults to https://api.anthropic.com/v1). */
export const anthropicProviderKind = sdkProviderKind<HostedProviderFields>(
  hostedProviderFieldsSchema,
  (config, fetch) =>
    createAnthropic({ apiKey: config.api_key, baseURL: config.base_url, headers: config.headers, fetch })(
      config.model,
    ),
  // Without native structured output the package forces a JSON tool, which would take the place of tool calls.
  () => 'without_tools',
);

/**
 * OpenAI's Responses API (`<base_url>/responses`), the one the package uses by default; base_url defaults to
 * https://api.openai.com/v1. Servers that only speak /v1/chat/completions are the `openai_compatible` kind.
 */
export const openaiProviderKind = sdkProviderKind<HostedProviderFields>(
  hostedProviderFieldsSchema,
  (config, fetch) =>
    createOpenAI({ apiKey: config.api_key, baseURL: config.base_url, headers: config.headers, fetch })(
      config.model,
    ),
  () => 'always',
);

/**
 * Google's Gemini API (`<base_url>/models/<model>:generateContent`, `:streamGenerateContent?alt=sse`);
 * base_url defaults to https://generativelanguage.googleapis.com/v1beta.
 */
export const geminiProviderKind = sdkProviderKind<HostedProviderFields>(
  hostedProviderFieldsSchema,
  (config, fetch) =>
    createGoogle({ apiKey: config.api_key, baseURL: config.base_url, headers: config.headers, fetch })(
      config.model,
    ),
  // Gemini refuses a JSON response type together with function declarations.
  () => 'without_tools',
);

/** xAI's Responses API (`<base_url>/responses`), the only one the xAI package speaks; default https://api.x.ai/v1. */
export const grokProviderKind = sdkProviderKind<HostedProviderFields>(
  hostedProviderFieldsSchema,
  (config, fetch) =>
    createXai({ apiKey: config.api_key, baseURL: config.base_url, headers: config.headers, fetch })(
      config.model,
    ),
  () => 'always',
);

/**
 * Any OpenAI-style chat completions server (`<base_url>/chat/completions`): Ollama, vLLM, llama.cpp server,
 * LM Studio, gateways. Usage is requested in streams too (`stream_options.include_usage`).
 */
export const openaiCompatibleProviderKind = sdkProviderKind<OpenAICompatibleFields>(
  openaiCompatibleFieldsSchema,
  (config, fetch) =>
    createOpenAICompatible({
      name: config.provider_name ?? 'openai_compatible',
      baseURL: config.base_url,
      apiKey: config.api_key,
      headers: config.headers,
      includeUsage: true,
      fetch,
      supportsStructuredOutputs: config.structured_outputs === true,
    })(config.model),
  // Only a server said to support json_schema response formats gets one (many local servers do not).
  (config) => (config.structured_outputs === true ? 'always' : 'never'),
);
