import { z } from 'zod';
import { maxDayMs } from '../../schemas/index.js';

/** 10 minutes, as in the providers' own SDKs: a request that hangs must not hold a worker forever. */
export const DEFAULT_TIMEOUT_MS = 600_000;

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
