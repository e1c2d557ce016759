import { handoffState } from '../core/handoff.js';
import { runAgent } from './agent-runtime.js';
import { compositeReply } from './composite-member.js';
import { commitReply } from './iteration-commit.js';
import { goalsStage } from './iteration-goals.js';
import { requestStage } from './iteration-request.js';
import { afterReply } from './iteration-schedule.js';
import type { Turn } from './iteration-turn.js';
import { isPark, type StepAction } from './step-action.js';

/**
 * The iteration's reply: as recorded by an earlier execution (then only what it asks for is scheduled), or
 * made now — by a child run when a team or group is in control of a handoff group, otherwise by the agent's
 * model after the sub-goal and request stages.
 */
export async function replyStage(turn: Omit<Turn, 'agent'>): Promise<StepAction> {
  const { context, data, loaded, stored, chat } = turn;
  const { services } = context;
  const { record } = stored;
  if (loaded.reply) {
    // Who made the reply: the run's agent, or the member of a handoff group in control then.
    const sender = chat[loaded.reply.index]?.sender ?? record.agent;
    return afterReply(context, data, record, loaded.reply, sender);
  }
  const group = services.handoffs.get(record.agent);
  const member = group ? handoffState(chat, record.id, group.members).active : record.agent;
  if (group && !services.agents.has(member)) {
    // A team or group in control of a handoff group answers as one member: a child run of its own.
    const reply = await compositeReply(context, record, member, chat);
    if (isPark(reply)) return reply;
    return commitReply(turn, member, reply);
  }
  const agent = runAgent(services, member, record.lineage, group?.name);
  return goalsStage({ ...turn, agent }, requestStage);
}
