import { handoffState } from '../../core/handoff.js';
import { runAgent } from '../runner/agent-runtime.js';
import { isPark, type StepAction } from '../runner/step-action.js';
import { goalsStage } from './goals-stage.js';
import { compositeReply } from './member-reply-stage.js';
import { commitReply } from './reply-commit-stage.js';
import { requestStage } from './request-stage.js';
import { afterReply } from './schedule-stage.js';
import type { Turn } from './turn.js';

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
