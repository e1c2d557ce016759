import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { checkedFinalAnswer } from '../../core/contracts.js';
import { assignToolCallIds, decideReply } from '../../core/reply-decision.js';
import { replyCommit } from '../../core/run-commits.js';
import { journalField, type ReplyEntry, replyEntrySchema } from '../../journal.js';
import { commit, done, type StepAction } from '../runner/step-action.js';
import type { ReplyOfTurn } from './member-reply-stage.js';
import { afterReply } from './schedule-stage.js';
import { supervisedDecision } from './supervised-decision.js';
import type { ReplyTurn } from './turn.js';

/**
 * Decides what the reply means (tool calls, a final answer checked by the guardrail and the contracts, a
 * supervisor's moves) and records it in the iteration's last commit (`reply:<n>`): once, an earlier attempt's
 * record wins. Then what the recorded reply asks for comes next.
 */
export function commitReply(turn: ReplyTurn, member: string, reply: ReplyOfTurn): StepAction {
  const { context, data, loaded, stored, chat } = turn;
  const { services } = context;
  const n = data.iteration;
  const { record } = stored;
  const parts = assignToolCallIds(reply.parts, n);
  const decided = decideReply(
    parts,
    n,
    reply.maxIterations,
    reply.rejection ? { failure: reply.rejection, retriesSoFar: record.guardrail_retries } : undefined,
  );
  const supervised = reply.supervisor
    ? supervisedDecision(record, decided, reply.supervisor, reply.goalsMoved === true)
    : undefined;
  const now = services.now().toISOString();
  const decision = supervised?.decision ?? decided;
  const plan = replyCommit({
    run: record,
    sender: member,
    iteration: n,
    parts,
    usage: reply.usage,
    costUsd: reply.costUsd,
    // The finishing reply of a supervisor made no model call: none of this iteration's was wasted.
    wastedCalls: reply.noModelCall ? 0 : loaded.modelCalls,
    decision:
      decision.kind === 'final' ? checkedFinalAnswer(services.contracts, record, decision, now) : decision,
    chatLength: chat.length,
    now,
    ...(reply.model ? { model: reply.model } : {}),
    ...(reply.effects ? { effects: reply.effects } : {}),
    ...(reply.middleware ? { middleware: reply.middleware } : {}),
    ...(supervised ? { supervisor: supervised.supervisor } : {}),
  });
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.reply(n),
        plan,
        ...(services.agents.has(member) ? { agentUsageKey: context.store.agentUsageKey(member) } : {}),
        treeUsageKey: context.store.treeUsageKey(record),
        expectedRev: stored.rev,
        expectedChatLength: chat.length,
      },
    },
    {
      what: 'recording the model reply',
      after: 'iteration.after_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        let entry: ReplyEntry;
        if (result.status === 'ok') entry = plan.journal;
        else if (result.status === 'done')
          entry = parseJsonRecord(replyEntrySchema, result.value, `journal reply:${n}`);
        else throw new RatchetError('internal', `recording the model reply: ${JSON.stringify(result)}`);
        context.logger.info(
          { decision: entry.decision, tool_calls: entry.tool_calls.length },
          'iteration committed',
        );
        return afterReply(context, data, record, entry, member);
      },
    },
  );
}
