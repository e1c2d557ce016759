import { z } from 'zod';
import { duration, maxDayMs } from '../../schemas/index.js';

/** 10 minutes, as in the providers' own SDKs: a request that hangs must not hold a worker forever. */
export const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * 3 minutes from sending a streamed request to the first byte of its body. The hosted APIs answer a stream at
 * once (their start event) and send keep-alives while a model thinks; the slow case is a local server's prefill
 * of a long prompt. Shorter than Node's own 5-minute header and body timeouts, so it is ours that fires.
 */
export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 180_000;

/** 2 minutes without a byte in the middle of a reply body (keep-alives count): the connection is dead. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Stall timeouts are at least this, so a busy event loop cannot make a live reply look stalled. */
export const MIN_STALL_TIMEOUT_MS = 100;

/** The kind's own fields; `rate_limit` is a base field of every entry (src/config/provider-config-schema.ts). */
const commonFields = {
  /** Where requests go instead of the provider's default endpoint: proxies, gateways, tests. */
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  /** Defaults for every request; an agent's own options win. */
  temperature: z.number().nonnegative().optional(),
  max_tokens: z.number().int().positive().optional(),
  /** Extra HTTP headers sent with every request. */
  headers: z.record(z.string(), z.string()).optional(),
  /**
   * Abort a request that has not finished after this long (default 10 minutes, at most a day: the timer
   * holds no more than 24.8 days); counts as a network error.
   */
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(maxDayMs, { error: `must be at most ${maxDayMs} (1 day)` })
    .optional(),
  /**
   * A streamed request that brings no byte of its body within this long is aborted as stalled (model_stalled,
   * retried); default 3 minutes. An unstreamed reply is generated before its headers come: timeout_ms bounds it.
   */
  first_token_timeout_ms: duration(MIN_STALL_TIMEOUT_MS, maxDayMs, '1 day').optional(),
  /** A reply body (streamed or not) with a gap between bytes over this long is aborted as stalled; default 2 minutes. */
  idle_timeout_ms: duration(MIN_STALL_TIMEOUT_MS, maxDayMs, '1 day').optional(),
  /** Tokens the model accepts; overrides `default_context_windows` and the built-in defaults. */
  context_window: z.number().int().nonnegative().optional(),
};

/** anthropic, openai, gemini, grok: a hosted API that needs a key. */
export const hostedProviderFieldsSchema = z.strictObject({
  api_key: z.string().min(1),
  ...commonFields,
});
export type HostedProviderFields = z.infer<typeof hostedProviderFieldsSchema>;

/** Any /v1/chat/completions server (Ollama, vLLM, llama.cpp, LM Studio, gateways). */
export const openaiCompatibleFieldsSchema = z.strictObject({
  api_key: z.string().min(1).optional(),
  ...commonFields,
  base_url: z.url({ protocol: /^https?$/ }),
  /** The provider id inside the AI SDK (its provider-options key); default "openai_compatible". */
  provider_name: z.string().min(1).optional(),
  /**
   * The server takes `response_format: {type: "json_schema"}` (OpenAI's structured outputs): agents with
   * options.output_schema ask for it. Default false: the schema is then only in the instructions.
   */
  structured_outputs: z.boolean().optional(),
});
export type OpenAICompatibleFields = z.infer<typeof openaiCompatibleFieldsSchema>;

/** The fields every SDK-backed kind shares, as the completer uses them. */
export type SdkProviderFields = HostedProviderFields | OpenAICompatibleFields;
