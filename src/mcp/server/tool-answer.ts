import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toApiError } from '../../api/index.js';
import type { Logger } from '../../log/index.js';

/**
 * A tool's answer: the value as JSON text (what a model reads) and as structured content (what a program
 * reads, checked against the tool's output schema). Anything thrown becomes a tool error `<code>: <message>`
 * with the HTTP API's wire codes and messages (toApiError): an unknown run or a refused answer reads as
 * such, and a server fault is logged with its cause and answered generically.
 */
export async function toolAnswer(
  tool: string,
  logger: Logger,
  work: () => Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  try {
    const value = await work();
    return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
  } catch (error) {
    const mapped = toApiError(error);
    if (mapped.isServerFault) logger.error({ err: error, tool }, 'MCP tool call failed');
    else logger.debug({ tool, code: mapped.code, message: mapped.message }, 'MCP tool call refused');
    // Text only: clients check any structured content against the tool's output schema, errors too.
    return { isError: true, content: [{ type: 'text', text: `${mapped.code}: ${mapped.message}` }] };
  }
}
