import type { Message, Part } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { type Usage, zeroUsage } from '../../../models/usage.js';
import type { AnswerCheckFailure } from '../../core/reply-decision.js';
import type { replyCommit } from '../../core/run-commits.js';
import type { SupervisorLimits } from '../../core/supervisor.js';
import type { RunRecord } from '../../run-record.js';
import { awaitChildRuns } from '../runner/child-wait.js';
import type { Park } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';

/** What an iteration records as its reply, from a model or from a child run. */
export interface ReplyOfTurn {
  parts: Part[];
  usage: Usage;
  costUsd: number;
  /** The max_iterations of whoever replied. */
  maxIterations: number;
  /** A check (the output guardrail, the output schema, a middleware) rejected this final answer. */
  rejection?: AnswerCheckFailure;
  /** The provider and model that made the reply (a model reply of an agent only). */
  model?: { provider: string; model: string };
  /** What the effects added to and recorded of the request (a model reply of an agent only). */
  effects?: Parameters<typeof replyCommit>[0]['effects'];
  /** The sub-goal limits of a supervisor that replied (its calls move its sub-goals). */
  supervisor?: SupervisorLimits;
  /** The run's sub-goals moved before this reply (the finishing reply of a supervisor): report the change. */
  goalsMoved?: boolean;
  /** Made without a model call (a supervisor's finishing reply): no call of the iteration was wasted. */
  noModelCall?: boolean;
  /** What the agent's middleware decided around the model call (a model reply of an agent only). */
  middleware?: Parameters<typeof replyCommit>[0]['middleware'];
}

/**
 * The reply of a team or handoff group that is in control of a handoff group: it runs as a child run on a
 * chat of its own, given the conversation so far as user messages (text only, senders kept), and its final
 * answer is the member's reply. It has no transfer tools, so its answer ends the group's run. Until it
 * finishes the step parks (no worker held).
 */
export async function compositeReply(
  context: StepContext,
  record: RunRecord,
  member: string,
  chat: readonly Message[],
): Promise<ReplyOfTurn | Park> {
  const outcome = await awaitChildRuns(context, {
    parent: record,
    lineage: [],
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
