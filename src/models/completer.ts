import type { Message, Part } from '../chat/index.js';
import type { Usage } from './usage.js';

/** A tool as the model sees it: its input schema is JSON Schema generated from the tool's zod schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface CompletionOptions {
  temperature?: number;
  maxTokens?: number;
  /**
   * Ask for the reply's text as JSON matching this JSON Schema (an agent's options.output_schema). A provider
   * that supports structured output passes it on; one that does not ignores it (the engine validates the
   * answer either way).
   */
  responseFormat?: { type: 'json'; schema: Record<string, unknown>; name: string };
}

/** Where a request comes from; providers may use it (the scripted one does), none may depend on it. */
export interface CompletionContext {
  sessionId: string;
  runId: string;
  agent: string;
  iteration: number;
  /** 1 on the first attempt of an iteration; a retried attempt after a failure has a higher number. */
  attempt: number;
  /**
   * `summary`: the request asks for a summary of the chat (a compaction), not for the agent's next step.
   * Absent for the agent's own requests.
   */
  purpose?: 'summary';
}

export interface CompletionRequest {
  /** The whole chat, system prompt first. */
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  options: CompletionOptions;
  context: CompletionContext;
  /**
   * When set, the provider streams the reply and calls this with each piece of text as it arrives. The
   * Completion it returns is the same as without streaming: deltas are a preview, never the record.
   */
  onTextDelta?: (delta: string) => void;
}

/**
 * What a provider's rate-limit response headers said about the budget left (OpenAI x-ratelimit-*,
 * Anthropic anthropic-ratelimit-*); a field is absent when the provider did not say.
 */
export interface RateLimitStatus {
  remainingRequests?: number;
  remainingTokens?: number;
  /** Milliseconds until a spent budget (0 remaining) is whole again; with none spent, the latest reset reported. */
  resetMs?: number;
}

/** The model's reply: the engine turns it into an assistant message with its own id and timestamps. */
export interface Completion {
  parts: Part[];
  usage: Usage;
  /** Present when the provider's response carried rate-limit headers. */
  rateLimit?: RateLimitStatus;
}

/**
 * One model request. Implementations throw RatchetError with a model_* code on failure
 * (model_rate_limited with retryAfterMs for 429s, model_auth_failed for 401/403, ...).
 */
export interface Completer {
  complete(request: CompletionRequest, signal: AbortSignal): Promise<Completion>;
}
