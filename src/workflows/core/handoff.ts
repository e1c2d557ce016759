import type { Message } from '../../chat/index.js';

export const transferToolPrefix = 'transfer_to_';

export function transferToolName(member: string): string {
  return `${transferToolPrefix}${member}`;
}

export interface HandoffState {
  /** The member in control: the first member, or the target of the last transfer that went through. */
  active: string;
  /** Transfers that went through in this run. */
  handoffs: number;
}

/**
 * Who of a handoff group is in control of a run, read from the run's own messages in its chat: every
 * transfer_to_<member> call whose result is not an error passed control. A pure function of the chat, so
 * every step (and every worker) agrees without a record of its own.
 */
export function handoffState(
  messages: readonly Message[],
  runId: string,
  members: readonly string[],
): HandoffState {
  const own = `${runId}-`;
  const callNames = new Map<string, string>();
  let active = members[0] ?? '';
  let handoffs = 0;
  for (const message of messages) {
    if (!message.id.startsWith(own)) continue;
    for (const part of message.parts) {
      if (part.type === 'tool_call') callNames.set(part.id, part.name);
      if (part.type !== 'tool_result' || part.is_error) continue;
      const name = callNames.get(part.tool_call_id);
      if (!name?.startsWith(transferToolPrefix)) continue;
      const target = name.slice(transferToolPrefix.length);
      if (!members.includes(target)) continue;
      active = target;
      handoffs += 1;
    }
  }
  return { active, handoffs };
}
