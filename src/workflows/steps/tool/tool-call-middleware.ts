import type { ToolCallPart } from '../../../chat/index.js';
import {
  extensionContext,
  type MiddlewareDecision,
  runToolChain,
  type ToolResult,
} from '../../../extensions/index.js';
import type { Logger } from '../../../log/index.js';
import { findTool, prepareToolCall, type Tool, type ToolOutcome } from '../../../tools/index.js';
import type { ToolJobData } from '../../job-data.js';
import type { AgentRuntime } from '../runner/step-context.js';

/** A tool call's outcome with what the middleware around it decided (recorded in the call's outcome entry). */
export type ToolCallResult = ToolOutcome & { middleware?: MiddlewareDecision[] };

/**
 * A tool call through the agent's middleware (docs/extending.md), the first outermost; `run` runs the
 * handler of the tool the call names, with its input. A middleware may change the call's arguments (they
 * are checked again by the tool's schema), change the result, or refuse the call: the model then gets an
 * error result naming the middleware, and the run goes on. What they decide is recorded with the call's
 * outcome, so a repeated tool step reads it; a call whose outcome was not recorded is handled by its tool's
 * interrupted policy, and its middleware run again with it.
 *
 * `time` is a persisted time: the call's intent's.
 */
export async function toolCallThroughMiddleware(
  agent: AgentRuntime,
  data: ToolJobData,
  call: ToolCallPart,
  time: string,
  base: { signal: AbortSignal; logger: Logger },
  run: (tool: Tool, input: unknown, signal: AbortSignal) => Promise<ToolOutcome>,
): Promise<ToolCallResult> {
  const middleware = agent.middleware?.filter((entry) => entry.definition.aroundToolCall) ?? [];
  let last: ToolOutcome | undefined;
  const step = {
    sessionId: data.session_id,
    runId: data.run_id,
    agent: agent.name,
    iteration: data.iteration,
    now: time,
    scope: call.id,
  };
  const outcome = await runToolChain(
    middleware,
    { name: call.name, arguments: call.arguments, toolCallId: call.id },
    async (sent, signal): Promise<ToolResult> => {
      const tool = findTool(agent.toolboxes, sent.name);
      const prepared = prepareToolCall(
        sent,
        tool,
        agent.tools.map((definition) => definition.name),
      );
      last = prepared.ok ? await run(prepared.tool, prepared.input, signal) : prepared.outcome;
      return { content: last.content, isError: last.isError };
    },
    (name) => extensionContext(name, step),
    base,
  );
  const decisions = outcome.decisions.length > 0 ? { middleware: outcome.decisions } : {};
  if (outcome.kind === 'refused') {
    const content = `the call of tool "${call.name}" was refused by middleware "${outcome.by}": ${outcome.reason}`;
    return { content, isError: true, ...decisions };
  }
  // What the handler gave besides its text (images) stays, unless a middleware made a result of its own.
  const extras = last && outcome.reply.content === last.content ? last : {};
  return { ...extras, content: outcome.reply.content, isError: outcome.reply.isError, ...decisions };
}

/** Whether the agent has middleware around its tool calls. */
export function hasToolMiddleware(agent: AgentRuntime): boolean {
  return agent.middleware?.some((entry) => entry.definition.aroundToolCall) ?? false;
}
