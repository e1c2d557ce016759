import { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { ToolDefinition } from '../models/completer.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** What a handler gets besides its input. */
export interface ToolContext {
  /** The same on every retry of this call: pass it to any external API that dedupes requests. */
  idempotencyKey: string;
  /** Aborted on cancellation or worker shutdown. */
  signal: AbortSignal;
  logger: Logger;
  sessionId: string;
  runId: string;
  agent: string;
  iteration: number;
  toolCallId: string;
  /**
   * Asks a person and resolves with the answer. Until it comes, the step is parked in the queue: no worker is
   * held, and the handler runs again from the start when the answer arrives, so ask before any side effect
   * (and only from tools whose calls may run again: idempotent, or onInterrupted "rerun").
   */
  ask(question: AskOptions): Promise<string>;
  /** Reports the run's progress (a progress event; `fraction` in 0..1 when known). */
  reportProgress(progress: { message: string; fraction?: number }): Promise<void>;
}

export interface AskOptions {
  question: string;
  options?: string[];
  /** After this long without an answer, `defaultAnswer` applies (required with a timeout). */
  timeoutMs?: number;
  defaultAnswer?: string;
}

/**
 * What happens when a worker died during a call of this tool and the call is taken over:
 * `rerun` runs it again with the same idempotency key; `outcome_unknown` gives the model an error result
 * saying the call may or may not have taken effect.
 */
export type InterruptedPolicy = 'rerun' | 'outcome_unknown';

export interface Tool<Input = unknown> {
  name: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  /**
   * The JSON Schema the model is offered, when the tool's schema comes from elsewhere (an MCP server's):
   * sent as given rather than generated from `inputSchema`, which still checks the arguments.
   */
  jsonSchema?: Record<string, unknown>;
  /** Safe to run again with the same idempotency key. Decides the default InterruptedPolicy. */
  idempotent: boolean;
  /** Overrides the policy the `idempotent` flag implies. */
  onInterrupted?: InterruptedPolicy;
  handler(context: ToolContext, input: Input): Promise<string | JsonValue>;
}

/** Keeps the input type of the schema and the handler in step. */
export function defineTool<Schema extends z.ZodType>(tool: {
  name: string;
  description: string;
  inputSchema: Schema;
  idempotent: boolean;
  onInterrupted?: InterruptedPolicy;
  handler(context: ToolContext, input: z.output<Schema>): Promise<string | JsonValue>;
}): Tool<z.output<Schema>> {
  return tool as Tool<z.output<Schema>>;
}

export function interruptedPolicyOf(tool: Pick<Tool, 'idempotent' | 'onInterrupted'>): InterruptedPolicy {
  return tool.onInterrupted ?? (tool.idempotent ? 'rerun' : 'outcome_unknown');
}

// Tool lists can change while a worker runs (an MCP server reconnects), so definitions are computed per
// request; a tool is immutable, so its definition is computed once.
const definitions = new WeakMap<Tool, ToolDefinition>();

export function toolDefinitionOf(tool: Tool): ToolDefinition {
  const known = definitions.get(tool);
  if (known) return known;
  const jsonSchema = tool.jsonSchema
    ? { ...tool.jsonSchema }
    : (z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);
  delete jsonSchema.$schema;
  const definition = { name: tool.name, description: tool.description, inputSchema: jsonSchema };
  definitions.set(tool, definition);
  return definition;
}
