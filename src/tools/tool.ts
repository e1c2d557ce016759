import { z } from 'zod';
import type { Message } from '../chat/index.js';
import type { Logger } from '../log/index.js';
import type { ToolDefinition } from '../models/completer.js';
import type { MemoryStore } from './builtin/memory/memory-store.js';
import type { FileChange } from './file-change.js';
import type { JsonValue } from './json-value.js';
import type { SessionDataStore } from './session-data-store.js';
import type { ToolOutput } from './tool-result.js';

export type { JsonValue };

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
  /**
   * Reports the run's progress (a progress event; `fraction` in 0..1 when known). `data` names intermediate
   * results (names of 1-64 letters, digits, "_", "." or "-" to JSON values of at most 2,000 characters, at
   * most 20 a report), merged into the run's `metadata.partial_results` when the report is made (at most 20
   * names a run: a new name past them is not kept), once per report even when the handler runs again.
   */
  reportProgress(progress: {
    message: string;
    fraction?: number;
    data?: Record<string, unknown>;
  }): Promise<void>;
  /**
   * Runs other agents as child runs, each on a chat of its own holding its task, and resolves with how each
   * ended, in the order given, once all have finished, or as soon as one has failed (the others are then
   * cancelled). Until then the step is parked (no worker held) and the handler runs again from the start when
   * a child finishes: the children are started once, so call it before any side effect.
   */
  delegate(tasks: readonly DelegatedTask[]): Promise<DelegationResult[]>;
  /** The messages of the chat the run works on, as recorded so far. */
  chat(): Promise<Message[]>;
  /** The run's sub-goals as its last reply left them (a supervisor's, options.supervisor; else none). */
  subGoals(): Promise<readonly SubGoalView[]>;
  /** The session's shared data and parking, for tools that keep data shared by its agents (state, tasks, notes). */
  session: SessionAccess;
  /**
   * Reports a file of the workspace this call created, changed or deleted: it becomes a `file_change` event,
   * committed with the call's outcome (error or not), so it is emitted once.
   */
  recordFileChange(change: FileChange): void;
  /** Memory that outlives the session: an agent's own notes and the deployment's (the `memory` toolbox). */
  memory: MemoryStore;
}

/** One sub-goal of a supervisor's run, as its tools read it. */
export interface SubGoalView {
  id: string;
  title: string;
  status: 'pending' | 'in_progress' | 'completed' | 'failed';
  result: string | null;
}

export interface DelegatedTask {
  agent: string;
  task: string;
  /**
   * Continue the conversation of this thread with the agent (its earlier delegations with the same thread in
   * this session): the child run works on the thread's chat, history included. Absent: a fresh chat.
   */
  thread?: string;
}

export interface DelegationResult {
  agent: string;
  run_id: string;
  status: 'completed' | 'failed' | 'cancelled';
  /** The child's final answer, when it completed. */
  answer: string | null;
  /** Why it failed or was cancelled. */
  error: string | null;
  /**
   * What the child's result says about itself: execution_time_ms, iterations, tool_calls {count, names},
   * tokens {input, output, total}, cost_usd (and confidence, partial, contract: null for now).
   */
  metadata: Readonly<Record<string, unknown>>;
}

/**
 * What a tool call may do with its session: read and write the data its agents share (through the session
 * data store, which alone talks to Redis), and park the call's step until something happens.
 */
export interface SessionAccess {
  data: SessionDataStore;
  /** The step job running this call: a parked call is woken by this id. */
  jobId: string;
  now(): Date;
  /** Longest a parked call sleeps before it looks again (`worker.question_recheck_ms`). */
  recheckMs: number;
  /** The run's deadline (ms since the epoch), when it has one: no step is parked past it. */
  deadlineMs?: number | undefined;
  /**
   * Parks the call's step until `wakeAt` (ms since the epoch) or until `wake(jobId)`, holding no worker: throw
   * the error it returns. The handler then runs again from the start, so park only before any side effect.
   * `recheck`, run once the step is parked, says whether what it waits for came meanwhile (a `wake` that found
   * the step still running): then the step is woken at once.
   */
  park(wakeAt: number, waitingFor: string, recheck?: () => Promise<boolean>): Promise<Error>;
  /** Wakes a parked step of this session at once; a step that is not parked is left alone. */
  wake(jobId: string): Promise<void>;
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
  /** Returns the result's text (a string, or JSON), or withImages(...) to add images to it. */
  handler(context: ToolContext, input: Input): Promise<ToolOutput>;
}

/** Keeps the input type of the schema and the handler in step. */
export function defineTool<Schema extends z.ZodType>(tool: {
  name: string;
  description: string;
  inputSchema: Schema;
  idempotent: boolean;
  onInterrupted?: InterruptedPolicy;
  handler(context: ToolContext, input: z.output<Schema>): Promise<ToolOutput>;
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
