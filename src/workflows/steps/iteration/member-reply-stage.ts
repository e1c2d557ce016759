import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { zeroUsage } from '../../../models/usage.js';
import type { RunInheritance } from '../../job-data.js';
import type { RunRecord } from '../../run-record.js';
import { awaitChildRuns } from '../runner/child-wait.js';
import { isPark, type Park } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import { next, type StageResult } from './stage-pipeline.js';
import type { ReplyOfTurn, Turn } from './turn.js';

/** The member reply stage: when a team or group in control of a handoff group replies, its child run's answer. */
export async function memberReplyStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, stored, member, agent, chat } = turn;
  if (member === undefined || agent || turn.recorded) return next(turn);
  const reply = await compositeReply(context, stored.record, member, chat, turn.data.inherited);
  if (isPark(reply)) return reply;
  return next({ ...turn, reply });
}

/**
 * The reply of a team or handoff group that is in control of a handoff group: it runs as a child run on a
 * chat of its own, given the conversation so far as user messages (text only, senders kept), and its final
 * answer is the member's reply. It has no transfer tools, so its answer ends the group's run. Until it
 * finishes the step parks (no worker held).
 */
async function compositeReply(
  context: StepContext,
  record: RunRecord,
  member: string,
  chat: readonly Message[],
  inherited: RunInheritance | undefined,
): Promise<ReplyOfTurn | Park> {
  const outcome = await awaitChildRuns(context, {
    parent: record,
    lineage: [],
    inherited,
    tasks: [
      { agent: member, task: '', turn: { messages: (childRunId) => conversationOf(chat, childRunId) } },
    ],
  });
  if (outcome.kind === 'waiting') return outcome.park;
  const [child] = outcome.states;
  if (!child) throw new RatchetError('internal', `no child run for member ${member}`);
  if (outcome.kind === 'failed') {
    throw new RatchetError(
      'member_failed',
      `member ${member} (run ${child.runId}) ${child.status}: ${child.error ?? 'no reason given'}`,
    );
  }
  return {
    parts: [{ type: 'text', text: child.result ?? '' }],
    usage: { ...zeroUsage },
    costUsd: 0,
    maxIterations: Number.MAX_SAFE_INTEGER,
  };
}

function conversationOf(chat: readonly Message[], childRunId: string): Message[] {
  return chat
    .flatMap((message) => {
      const parts = message.parts.filter((part) => part.type === 'text');
      if (message.role === 'system' || message.role === 'tool' || parts.length === 0) return [];
      return [{ ...message, role: 'user' as const, parts }];
    })
    .map((message, index) => ({ ...message, id: `${childRunId}-in${index}` }));
}
