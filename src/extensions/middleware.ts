import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Message, Part } from '../chat/index.js';
import type { CompletionOptions, ToolDefinition } from '../models/completer.js';
import type { Usage } from '../models/usage.js';
import type { ExtensionContext } from './context.js';

/** A JSON value: what a middleware may record of its decision. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A model request on its way to the provider, as a middleware sees and may change it. */
export interface ModelRequest {
  /**
   * The provider (its name in the config's `providers`) the request goes to: the agent's own, unless a
   * middleware before this one routed it elsewhere. Routing is setting another configured provider's name.
   */
  provider: string;
  /** What the model is sent, system prompt first, as the agent's effects planned it. */
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  options: CompletionOptions;
}

/** The model's reply, as a middleware sees and may change it. */
export interface ModelReply {
  parts: Part[];
  usage: Usage;
  /** The provider and the model that made the reply. */
  provider: string;
  model: string;
}

/** A tool call on its way to its handler: the tool's name and its arguments (JSON text). */
export interface ToolRequest {
  name: string;
  arguments: string;
  toolCallId: string;
}

/** What a tool call returns to the model. */
export interface ToolResult {
  content: string;
  isError: boolean;
}

/**
 * A middleware's refusal: returned instead of calling `next` (the request is refused) or instead of the reply
 * or result `next` gave (the reply is refused). A refused model call fails the run with `middleware_refused`;
 * a refused tool call gives the model an error result naming the middleware, and the run goes on.
 */
export interface Refusal {
  readonly refused: string;
}

/** A refusal with its reason (see {@link Refusal}). */
export function refuse(reason: string): Refusal {
  return { refused: reason };
}

/** Whether a middleware's outcome is a refusal. */
export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && typeof (value as Refusal).refused === 'string';
}

/**
 * A middleware's rejection of a final answer (a model reply without tool calls): returned instead of the reply
 * `next` gave. The reply stays in the transcript; the model is sent the reason and asked to answer again,
 * until the run has had `maxRetries` answers sent back; then the run fails with `guardrail_failed`. The count
 * is the run's, kept with its record (the built-in `output_guardrail` works this way).
 */
export interface AnswerRejection {
  readonly rejected: string;
  readonly maxRetries: number;
  /** What the `answer_rejected` event names as the check: the middleware's name unless given. */
  readonly check?: string;
}

/** A rejection of the final answer `next` gave (see {@link AnswerRejection}); `maxRetries` defaults to 0. */
export function rejectAnswer(
  reason: string,
  options: { maxRetries?: number; check?: string } = {},
): AnswerRejection {
  return {
    rejected: reason,
    maxRetries: options.maxRetries ?? 0,
    ...(options.check === undefined ? {} : { check: options.check }),
  };
}

/** Whether a middleware's outcome is a rejection of the answer. */
export function isAnswerRejection(value: unknown): value is AnswerRejection {
  if (typeof value !== 'object' || value === null) return false;
  const { rejected, maxRetries } = value as AnswerRejection;
  return typeof rejected === 'string' && Number.isInteger(maxRetries) && maxRetries >= 0;
}

/** What a middleware may give `next` besides the request. */
export interface NextOptions {
  /**
   * Aborts the rest of the chain and the call itself when it fires (a time limit of the middleware's own),
   * besides the step's own signal. The call then fails with the signal's reason, and the middleware decides
   * what that means: the built-in `timeout` turns it into its own error.
   */
  signal?: AbortSignal;
}

/** What every middleware call gets: its configured options, its deterministic context, and a note to record. */
export interface MiddlewareCall<Options> {
  /** The options of this middleware on this agent (`middleware: [{kind, ...options}]`), parsed. */
  options: Options;
  /** Only deterministic inputs: see {@link ExtensionContext}. */
  context: ExtensionContext;
  /**
   * The step's signal, with the signals of the middleware outside this one: aborted at shutdown, at the
   * run's cancellation and at its deadline. Work of the middleware's own that waits should stop with it.
   */
  signal: AbortSignal;
  /**
   * The worker's logger, bound to the run, the agent and this middleware. Logging is not a decision: a step
   * that runs again logs again.
   */
  logger: Logger;
  /**
   * Records what the middleware decided (at most 4,000 characters of JSON), with the step's commit: the
   * reply's journal entry for a model call, the call's outcome for a tool call. Later calls replace earlier.
   */
  record(note: JsonValue): void;
}

export interface ModelCall<Options> extends MiddlewareCall<Options> {
  request: ModelRequest;
}

export interface ToolCall<Options> extends MiddlewareCall<Options> {
  request: ToolRequest;
}

/** The rest of the chain: the next middleware, and at the end the model itself. */
export type NextModelCall = (request: ModelRequest, options?: NextOptions) => Promise<ModelReply>;
/** The rest of the chain: the next middleware, and at the end the tool's handler. */
export type NextToolCall = (request: ToolRequest, options?: NextOptions) => Promise<ToolResult>;

/**
 * A middleware: code around each model call and/or each tool call of the agents that list it. Middleware
 * run in the order an agent lists them, the first outermost.
 *
 * Replay safety is the framework's: what a middleware returns (the reply, the result, a refusal, the provider
 * it routed to) and what it records are committed with the step, and a step that runs again after that
 * commit reads them and does not call the middleware. Before that commit nothing it decided was kept, so
 * an execution that died may have its decision made again (as its model call is made again).
 *
 * Around a model call it may also reject a final answer ({@link rejectAnswer}): the answer goes back to the
 * model with the reason, as the built-in `output_guardrail` does.
 *
 * A middleware that throws fails the step (code `middleware_failed`, its name in the message); errors
 * thrown by `next` (a provider's rate limit, a tool's failure) pass through it unchanged unless it catches
 * them.
 */
export interface MiddlewareDefinition<Schema extends z.ZodType = z.ZodType<Record<string, never>>> {
  /** The kind agents list it by in the config (`middleware: [{ kind: <name> }]`). */
  name: string;
  /** The options it takes in the config, beside `kind`; none when absent (then an option is an error). */
  options?: Schema;
  aroundModelCall?(
    call: ModelCall<z.output<Schema>>,
    next: NextModelCall,
  ): Promise<ModelReply | Refusal | AnswerRejection>;
  aroundToolCall?(call: ToolCall<z.output<Schema>>, next: NextToolCall): Promise<ToolResult | Refusal>;
}

/** Any middleware, whatever its options. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds middleware of every option type.
export type AnyMiddleware = MiddlewareDefinition<any>;

/**
 * A middleware definition, typed from its options schema. Register it through the `extensions` of
 * `loadConfig` and `RatchetWorker` (`{ middleware: [definition] }`), then list it on an agent.
 *
 * `examples/cheap-router-middleware.ts` is one, run as written by its test; docs/extending.md has the rules.
 */
export function defineMiddleware<Schema extends z.ZodType = z.ZodType<Record<string, never>>>(
  definition: MiddlewareDefinition<Schema>,
): MiddlewareDefinition<Schema> {
  return definition;
}

/** A middleware as an agent uses it: its definition and the options its config entry gave. */
export interface ConfiguredMiddleware {
  definition: AnyMiddleware;
  options: unknown;
}
