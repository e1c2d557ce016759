import { z } from 'zod';
import type { AnyTool, JsonValue, ListedTool, ToolContext } from '../../tools/index.js';

/** Calls a tool on the server; resolves with the tool's output or throws a message for the model. */
export type McpToolCall = (
  name: string,
  input: Record<string, unknown>,
  context: ToolContext,
) => Promise<string | JsonValue>;

/**
 * One of a server's tools as a Ratchet tool. Its name is the server's (the toolbox carries the server's
 * name, and agents resolve clashes by toolbox order). The model is offered the server's JSON Schema as is;
 * the arguments are checked against it before the call when zod can express it, and otherwise by the server.
 * MCP tools act on the outside world: a call interrupted by a crash is run again only when the server
 * declares the tool read-only or idempotent.
 */
export function mcpToolOf(listed: ListedTool, call: McpToolCall): AnyTool {
  const annotations = listed.annotations ?? {};
  return {
    name: listed.name,
    description: listed.description ?? listed.title ?? '',
    inputSchema: inputSchemaOf(listed.inputSchema),
    jsonSchema: listed.inputSchema,
    idempotent: annotations.readOnlyHint === true || annotations.idempotentHint === true,
    handler: (context: ToolContext, input: Record<string, unknown>) => call(listed.name, input, context),
  };
}

const anyObject = z.record(z.string(), z.unknown());

function inputSchemaOf(jsonSchema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  try {
    const converted = z.fromJSONSchema(jsonSchema);
    // Only an object schema is a valid argument schema; a conversion that lost that would accept anything.
    return converted instanceof z.ZodObject ? (converted as z.ZodType<Record<string, unknown>>) : anyObject;
  } catch {
    // Keywords zod cannot express (conditionals, external references): the server validates alone.
    return anyObject;
  }
}
