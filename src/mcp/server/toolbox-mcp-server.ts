import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../log/index.js';
import { DEFAULT_MAX_REPLY_CHARS } from '../../models/index.js';
import { redactSecrets } from '../../secrets/index.js';
import {
  type AnyTool,
  type FileChanges,
  fileChangeCollector,
  type MemoryStore,
  prepareToolCall,
  runToolHandler,
  type ToolBox,
  type ToolOutcome,
  toolDefinitionOf,
} from '../../tools/index.js';
import {
  matchingApproval,
  maxRememberedApprovals,
  type RememberedApproval,
  rememberedApprovalOf,
  rememberSchema,
} from '../../workflows/index.js';
import { maxPathPrefixLength, type Remember } from '../../workflows/remembered-approval-record.js';
import { canElicit, elicit, mcpToolboxAgent, toolboxToolContext } from './toolbox-tool-context.js';

/**
 * The most characters a call's arguments may hold, as JSON: the most a model's reply may carry
 * (DEFAULT_MAX_REPLY_CHARS), so an MCP client can send a tool nothing larger than an agent could.
 */
export const maxToolboxArgumentChars = DEFAULT_MAX_REPLY_CHARS;

/** How much of a call's arguments an approval form shows. */
const shownArgumentChars = 2_000;

/**
 * What an approval form offers to remember (decision 0050): `once` (nothing), or a rule of decision 0046 kept
 * for this MCP session. An elicitation form holds only flat fields, so the prefix is a field of its own.
 */
const rememberChoices = ['once', 'tool', 'arguments', 'path_prefix'] as const;

export interface ToolboxMcpServerOptions {
  /** The toolboxes served, in order: on a name clash the first one's tool is served (as for an agent). */
  toolboxes: readonly ToolBox[];
  /** Tools whose every call a person approves first (an elicitation), or which are refused without one. */
  approvalTools: ReadonlySet<string>;
  /** Where the `memory` toolbox keeps its notes. */
  memory: MemoryStore;
  logger: Logger;
  /** The clock the tools read (memory's expiry). */
  now?: () => Date;
  /**
   * Each request is a server of its own (the stateless HTTP route): nothing lasts from one call to the next,
   * so the browser's tools that act on the page an earlier call opened are refused rather than run on a
   * blank page.
   */
  perRequest?: boolean;
}

/** The built-in toolbox whose page lives as long as the server's scope. */
const browserToolboxName = 'browser';

/** The browser tool that needs no page opened before it. */
const pageOpeningTool = 'browser_open';

/**
 * The tools of configured toolboxes as an MCP server (`ratchet mcp --toolboxes`, the API's
 * `/v1/mcp/toolboxes`). A call goes through what an agent's call goes through: the tool's schema, its own
 * guards (the workspace, the exec sandbox, the SSRF guard are the toolbox's, built from the same config),
 * approval when the config asks for it, and secrets redacted from the result. What belongs to a run only
 * (delegation, session data, parking) is refused. One server is one scope: the browser keeps a page for it
 * until `close`.
 */
export function createToolboxMcpServer(options: ToolboxMcpServerOptions): Server {
  const { logger } = options;
  const scopeId = `mcp_${randomUUID()}`;
  const browserPages = new Map<string, string>();
  const now = options.now ?? (() => new Date());
  const tools = servedTools(options.toolboxes);
  // The browser's tools as served (on a name clash another toolbox's tool is served, and is not one).
  const needsOpenPage = new Set(
    options.perRequest
      ? options.toolboxes
          .filter((toolbox) => toolbox.name === browserToolboxName)
          .flatMap((toolbox) => toolbox.tools)
          .filter((tool) => tool.name !== pageOpeningTool && tools.get(tool.name) === tool)
          .map((tool) => tool.name)
      : [],
  );
  const server = new Server(
    { name: 'ratchet-toolboxes', version: '1' },
    {
      capabilities: { tools: {} },
      instructions:
        "The tools of Ratchet's configured toolboxes, confined as when an agent calls them (workspace, " +
        'sandbox, network guard). Tools marked for approval ask you first, or are refused if your client ' +
        'cannot show a form.',
    },
  );
  // The approvals the client's person asked to remember (decision 0050): this server's, so this MCP
  // session's (a stdio connection), in memory only, gone when it closes.
  const remembered: RememberedApproval[] = [];
  const listed: McpTool[] = [...tools.values()].map((tool) => {
    const definition = toolDefinitionOf(tool);
    return {
      name: definition.name,
      description: definition.description,
      inputSchema: { ...definition.inputSchema, type: 'object' },
      annotations: { idempotentHint: tool.idempotent },
    };
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const argumentsJson = JSON.stringify(request.params.arguments ?? {});
    if (argumentsJson.length > maxToolboxArgumentChars) {
      return errorResult(
        `arguments: ${argumentsJson.length} characters of JSON, over the limit of ${maxToolboxArgumentChars}; ` +
          'send less (read and write large files in parts)',
      );
    }
    const prepared = prepareToolCall({ name, arguments: argumentsJson }, tools.get(name), [...tools.keys()]);
    if (!prepared.ok) return resultOf(prepared.outcome);
    if (needsOpenPage.has(name)) {
      return errorResult(
        `tool "${name}" acts on the page an earlier call opened, and over the stateless HTTP route each ` +
          `request is a scope of its own: no page is kept between calls (${pageOpeningTool} answers the ` +
          "page's title and URL). Serve the browser over stdio (ratchet mcp --toolboxes browser) to keep a page " +
          'for the connection',
      );
    }
    const scope = { server, requestId: extra.requestId, signal: extra.signal };
    let approvedBy: RememberedApproval | undefined;
    if (options.approvalTools.has(name)) {
      approvedBy = matchingApproval(remembered, { name, arguments: argumentsJson });
      if (approvedBy === undefined) {
        const refusal = await approvalRefusal(scope, { name, argumentsJson, remembered, now });
        if (refusal !== undefined) return errorResult(refusal);
      }
    }
    const progressToken = extra._meta?.progressToken;
    const changes = fileChangeCollector();
    const context = toolboxToolContext({
      ...scope,
      progressToken,
      sendProgress: (progress, message) =>
        progressToken === undefined
          ? Promise.resolve()
          : extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, message },
            }),
      logger: logger.child({ tool: name }),
      memory: options.memory,
      scopeId,
      browserPages,
      now,
      toolName: name,
      recordFileChange: changes.record,
    });
    try {
      const outcome = await runToolHandler(prepared.tool, prepared.input, context);
      return resultOf(outcome, changes.collected(), approvedBy);
    } catch (error) {
      // A handler that parks or a cancelled call: not the tool's failure, and no run to hand it back to.
      logger.debug({ err: error, tool: name }, 'toolbox call over MCP stopped');
      return errorResult(
        extra.signal.aborted
          ? `the call of tool "${name}" was cancelled`
          : redactSecrets(`tool "${name}" cannot run over MCP: ${(error as Error).message}`),
      );
    }
  });

  const close = server.close.bind(server);
  server.close = async () => {
    try {
      await close();
    } finally {
      for (const toolbox of options.toolboxes) toolbox.runEnded?.(scopeId);
    }
  };
  return server;
}

/** The tools served, by name: the first toolbox's on a clash. */
function servedTools(toolboxes: readonly ToolBox[]): Map<string, AnyTool> {
  const tools = new Map<string, AnyTool>();
  for (const toolbox of toolboxes) {
    for (const tool of toolbox.tools) if (!tools.has(tool.name)) tools.set(tool.name, tool);
  }
  return tools;
}

/**
 * Why a call that needs approval may not run, or undefined once a person approved it. Without an elicitation
 * capability nobody can be asked, and the call is refused rather than run unapproved. An approval may ask to
 * be remembered for the session (decision 0050): the rule is added to `call.remembered`.
 */
async function approvalRefusal(
  scope: Parameters<typeof elicit>[0],
  call: { name: string; argumentsJson: string; remembered: RememberedApproval[]; now: () => Date },
): Promise<string | undefined> {
  const { name, argumentsJson } = call;
  if (!canElicit(scope.server)) {
    return (
      `tool "${name}" needs a person's approval, and this MCP client cannot ask for it (it declared no ` +
      'elicitation capability): use a client that supports elicitation, or have an agent call it'
    );
  }
  const shown =
    argumentsJson.length > shownArgumentChars
      ? `${argumentsJson.slice(0, shownArgumentChars)}… (${argumentsJson.length} characters)`
      : argumentsJson;
  let answer: Record<string, unknown> | undefined;
  try {
    answer = await elicit(
      scope,
      redactSecrets(`Approve the call of tool "${name}" with ${shown}?`),
      {
        decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'] },
        reason: { type: 'string', title: 'Reason (optional)', maxLength: 1_000 },
        remember: {
          type: 'string',
          title: 'Approve again without asking, until this MCP session ends',
          description:
            `once: ask every time; tool: every call of ${name}; arguments: calls with exactly these ` +
            'arguments; path_prefix: calls whose every path is inside the folder given below',
          enum: [...rememberChoices],
          default: 'once',
        },
        path_prefix: {
          type: 'string',
          title: 'Folder (with remember: path_prefix)',
          maxLength: maxPathPrefixLength,
        },
      },
      ['decision'],
    );
  } catch (error) {
    // An answer that does not fit the form (the SDK checks it against the schema), or none in time: the
    // call was not approved, and the client is told why in the tool's result, not by a protocol error.
    return redactSecrets(
      `the call of tool "${name}" was not approved: the approval form was not answered as asked ` +
        `(${(error as Error).message})`,
    );
  }
  if (answer?.decision !== 'approve') {
    const reason = typeof answer?.reason === 'string' && answer.reason !== '' ? `: ${answer.reason}` : '';
    return `the call of tool "${name}" was not approved${reason}`;
  }
  const remember = rememberOf(answer);
  if (!remember.ok) return `the call of tool "${name}" was not run: ${remember.problem}`;
  if (remember.rule === 'once') return undefined;
  const rule = rememberedApprovalOf(
    remember.rule,
    {
      id: `mcp_${String(scope.requestId)}`,
      agent: mcpToolboxAgent,
      tool: { name, arguments: argumentsJson },
    },
    call.now().toISOString(),
  );
  if (call.remembered.some((kept) => kept.key === rule.key)) return undefined;
  if (call.remembered.length >= maxRememberedApprovals) {
    return (
      `the call of tool "${name}" was not run: this MCP session remembers ${maxRememberedApprovals} approvals ` +
      'already, the most it keeps; approve it with remember "once", or start a new session'
    );
  }
  call.remembered.push(rule);
  return undefined;
}

/**
 * What an approving answer asks to remember: `once`, or a rule of decision 0046; or a problem naming the
 * field (the call is then not run: the person asked for what cannot be kept, and is asked again next time).
 */
function rememberOf(
  answer: Record<string, unknown>,
): { ok: true; rule: 'once' | Remember } | { ok: false; problem: string } {
  const choice = answer.remember ?? 'once';
  if (choice === 'once' || choice === 'tool' || choice === 'arguments') return { ok: true, rule: choice };
  if (choice !== 'path_prefix') {
    const shown = JSON.stringify(choice).slice(0, 100);
    return { ok: false, problem: `remember: ${shown} is not one of ${rememberChoices.join(', ')}` };
  }
  // The object branch alone, so its own message (empty, too long, a NUL) names the field.
  const parsed = rememberSchema.options[1].safeParse({ path_prefix: answer.path_prefix ?? '' });
  if (parsed.success) return { ok: true, rule: parsed.data };
  const message = parsed.error.issues[0]?.message ?? 'remember.path_prefix is not valid';
  return {
    ok: false,
    problem: `${message} (remember: path_prefix takes the folder in the path_prefix field)`,
  };
}

function resultOf(
  outcome: ToolOutcome,
  changes?: FileChanges,
  approvedBy?: RememberedApproval,
): CallToolResult {
  const meta = {
    // What the call changed in the workspace, as an agent's run reports it in file_change events.
    ...(changes && changes.changes.length > 0
      ? { 'ratchet/file_changes': { changes: changes.changes, more: changes.more } }
      : {}),
    // The remembered approval that let the call run without asking (decision 0050).
    ...(approvedBy
      ? {
          'ratchet/approved_by': {
            key: approvedBy.key,
            scope: approvedBy.scope,
            path_prefix: approvedBy.path_prefix,
          },
        }
      : {}),
  };
  return {
    content: [
      { type: 'text', text: outcome.content },
      ...(outcome.images ?? []).map((image) => ({
        type: 'image' as const,
        data: image.data,
        mimeType: image.media_type,
      })),
    ],
    ...(outcome.isError ? { isError: true } : {}),
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  } as CallToolResult;
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
