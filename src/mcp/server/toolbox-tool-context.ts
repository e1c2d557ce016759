import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from '../../log/index.js';
import {
  type AskOptions,
  askProblem,
  type FileChange,
  type MemoryStore,
  progressProblem,
  type SessionDataStore,
  type ToolContext,
} from '../../tools/index.js';

/** The longest a tool call waits for the MCP client's person to answer (an approval, or a tool's question). */
export const maxElicitationMs = 10 * 60_000;

/** The agent name the toolboxes see over MCP: the `memory` toolbox keeps its `scope: agent` notes under it. */
export const mcpToolboxAgent = 'mcp';

/** What one call through the toolbox MCP server has of its MCP request. */
export interface McpCallScope {
  server: Server;
  requestId: string | number;
  signal: AbortSignal;
  progressToken: string | number | undefined;
  sendProgress(progress: number, message: string): Promise<void>;
  logger: Logger;
  memory: MemoryStore;
  /** Stands for the run id: the browser's page lives as long as this scope (a stdio connection, an HTTP request). */
  scopeId: string;
  browserPages: Map<string, string>;
  now(): Date;
  toolName: string;
  recordFileChange(change: FileChange): void;
}

/** Whether the MCP client said it can show a form to its person (elicitation). */
export function canElicit(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation !== undefined;
}

/** Asks the client's person through an elicitation form; the accepted content, or undefined when declined. */
export async function elicit(
  scope: Pick<McpCallScope, 'server' | 'requestId' | 'signal'>,
  message: string,
  properties: Record<string, Record<string, unknown>>,
  required: readonly string[],
): Promise<Record<string, unknown> | undefined> {
  const result = await scope.server.elicitInput(
    {
      mode: 'form',
      message,
      requestedSchema: { type: 'object', properties, required: [...required] },
    } as never,
    { relatedRequestId: scope.requestId, signal: scope.signal, timeout: maxElicitationMs },
  );
  return result.action === 'accept' ? (result.content ?? {}) : undefined;
}

/**
 * The context a toolbox's handler gets when an MCP client calls it: no run, no session, no chat. What only a
 * run has (delegation, parking, the session's shared data) is refused with an error naming why; a question is
 * an elicitation when the client supports it. Browser pages are kept per scope, in memory.
 */
export function toolboxToolContext(scope: McpCallScope): ToolContext {
  const refuse = (what: string) => async (): Promise<never> => {
    throw new Error(`${what} is not available when a tool is called over MCP: it belongs to an agent's run`);
  };
  return {
    idempotencyKey: `mcp_${randomUUID()}`,
    signal: scope.signal,
    logger: scope.logger,
    sessionId: scope.scopeId,
    runId: scope.scopeId,
    agent: mcpToolboxAgent,
    iteration: 0,
    toolCallId: String(scope.requestId),
    ask: (question) => ask(scope, question),
    async reportProgress(progress) {
      const problem = progressProblem(progress);
      if (problem) throw new Error(problem);
      if (scope.progressToken === undefined) return;
      await scope.sendProgress(progress.fraction ?? 0, progress.message);
    },
    delegate: refuse('delegating to agents'),
    chat: async () => [],
    subGoals: async () => [],
    session: {
      data: sessionDataOf(scope.browserPages),
      jobId: scope.scopeId,
      now: scope.now,
      recheckMs: 1_000,
      deadlineMs: undefined,
      park: refuse('waiting (parking the step)'),
      wake: refuse('waking a parked step'),
    },
    recordFileChange: scope.recordFileChange,
    memory: scope.memory,
  };
}

async function ask(scope: McpCallScope, question: AskOptions): Promise<string> {
  const problem = askProblem(question);
  if (problem) throw new Error(problem);
  if (!canElicit(scope.server)) {
    throw new Error(
      `tool "${scope.toolName}" asks a person ("${question.question}"), and this MCP client cannot be asked ` +
        '(it declared no elicitation capability)',
    );
  }
  const answer = await elicit(
    scope,
    question.question,
    {
      answer: {
        type: 'string',
        title: 'Answer',
        ...(question.options && question.options.length > 0 ? { enum: question.options } : {}),
      },
    },
    ['answer'],
  );
  if (answer !== undefined && typeof answer.answer === 'string') return answer.answer;
  if (question.defaultAnswer !== undefined) return question.defaultAnswer;
  throw new Error(`the question "${question.question}" was not answered`);
}

/**
 * The session data a handler may touch over MCP: the browser's page record (kept for the scope), nothing
 * else. State, tasks, notes and waits belong to a session of agents; their toolboxes are not served.
 */
function sessionDataOf(browserPages: Map<string, string>): SessionDataStore {
  const pages: Pick<SessionDataStore, 'readBrowserPage' | 'writeBrowserPage'> = {
    readBrowserPage: async (runId) => browserPages.get(runId) ?? null,
    writeBrowserPage: async (runId, json) => {
      browserPages.set(runId, json);
    },
  };
  return new Proxy(pages, {
    get(target, property) {
      if (property in target) return target[property as keyof typeof target];
      // Not a thenable, and no symbol protocol: only the stores' methods are refused.
      if (typeof property === 'symbol' || property === 'then') return undefined;
      return async () => {
        throw new Error(`session data (${String(property)}) is not available when a tool is called over MCP`);
      };
    },
  }) as SessionDataStore;
}
