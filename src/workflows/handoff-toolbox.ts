import { z } from 'zod';
import { createToolBox, defineTool, type ToolBox } from '../tools/index.js';
import { handoffState, transferToolName } from './core/handoff.js';

/** A handoff group as its members' transfer tools see it. */
export interface HandoffGroup {
  name: string;
  members: readonly string[];
  maxHandoffs: number;
  /** Display prefix in clients. */
  prefix: string;
  /** What each member does, for the transfer tools' descriptions. */
  describe: (member: string) => string;
}

/**
 * A member's transfer_to_<other> tools: calling one passes control of the run to that member, on the same
 * chat. A transfer past the group's max_handoffs is refused with an error result (the member then answers).
 */
export function handoffToolbox(group: HandoffGroup, member: string): ToolBox {
  const tools = group.members
    .filter((other) => other !== member)
    .map((other) =>
      defineTool({
        name: transferToolName(other),
        description: `Hands the conversation over to ${other}${describedAs(group.describe(other))}. They continue from here and answer the user.`,
        inputSchema: z.strictObject({
          reason: z.string().optional().describe('why you hand over (they will see it in the chat)'),
        }),
        // Decided by the chat as it stands, which a rerun finds unchanged.
        idempotent: true,
        handler: async (context) => {
          const { handoffs } = handoffState(await context.chat(), context.runId, group.members);
          if (handoffs >= group.maxHandoffs) {
            throw new Error(
              `transfer refused: this conversation was already handed over ${handoffs} time(s), the most ` +
                `${group.name} allows (max_handoffs); answer the user yourself`,
            );
          }
          return `transferred to ${other}`;
        },
      }),
    );
  return createToolBox(`handoff:${group.name}`, tools);
}

function describedAs(description: string): string {
  return description.trim() === '' ? '' : ` (${description.trim()})`;
}
