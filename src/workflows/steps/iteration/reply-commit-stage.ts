import type { Part } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { decideCodeRules } from '../../contract-rules.js';
import { type CodeRuleVerdicts, checkedFinalAnswer, contractFor } from '../../core/contracts.js';
import { decideAfterReply } from '../../core/effects/after-reply.js';
import { assignToolCallIds, decideReply, type ReplyDecision } from '../../core/reply-decision.js';
import { replyCommit, replyMessage } from '../../core/run-commits.js';
import { crashPoint } from '../../crash-points.js';
import { journalField, type ReplyEntry, replyEntrySchema } from '../../journal.js';
import { treeRootOf } from '../../run-record.js';
import { isRunAgent, pinnedDefinition } from '../runner/agent-runtime.js';
import { done } from '../runner/step-action.js';
import { hasNotes, nextStepsOf } from './next-steps.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import { supervisedDecision } from './supervised-decision.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The reply stage: decides what the reply means (tool calls, a final answer checked by the guardrail and the
 * contracts, a supervisor's moves) and records it in the iteration's last commit (`reply:<n>`): once, an
 * earlier attempt's record wins. The iteration goes on with the reply as recorded.
 */
export async function replyCommitStage(turn: Turn): Promise<StageResult<Turn>> {
  const { context, data, loaded, stored, chat, reply, member } = turn;
  if (turn.recorded) return next(turn);
  if (!reply || member === undefined) {
    throw new RatchetError(
      'internal',
      `iteration ${data.iteration} of ${data.run_id} made no reply to record`,
    );
  }
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
  const replied = supervised?.decision ?? decided;
  const after = afterPhase(turn, parts, replied, now);
  if (after) crashPoint('iteration.after_effects_decided');
  // A question an effect asked after an answer: the run goes on, its next iteration asks it (decision 0049).
  const decision: ReplyDecision = after?.entry.ask && replied.kind === 'final' ? { kind: 'ask' } : replied;
  // The contracts as the run's recorded definition has them (decision 0030), not this worker's config's.
  const contracts = pinnedDefinition(services, turnDefinition(turn))?.contracts ?? services.contracts;
  let verdicts: CodeRuleVerdicts | undefined;
  if (decision.kind === 'final') {
    // The rules written in code decide here, once per model reply: their verdicts go into this commit.
    const contract = contractFor(contracts, record);
    if (contract)
      verdicts = await decideCodeRules({
        contract,
        answer: decision.result,
        rules: services.contractRules ?? new Map(),
        step: {
          sessionId: data.session_id,
          runId: data.run_id,
          agent: member,
          iteration: n,
          now: record.updated_at,
        },
        signal: context.signal,
      });
  }
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
      decision.kind === 'final' ? checkedFinalAnswer(contracts, record, decision, now, verdicts) : decision,
    ...(turn.agent?.outputSchemaVersion ? { outputSchemaVersion: turn.agent.outputSchemaVersion } : {}),
    chatLength: chat.length,
    now,
    ...(reply.model ? { model: reply.model } : {}),
    ...(reply.effects ? { effects: reply.effects } : {}),
    ...(reply.middleware ? { middleware: reply.middleware } : {}),
    ...(after ? { after: { messages: after.messages, events: after.events, entry: after.entry } } : {}),
    ...(supervised ? { supervisor: supervised.supervisor } : {}),
    ...(turn.upgrade ? { upgrade: { decision: turn.upgrade, requestedAt: loaded.upgradeRequestedAt } } : {}),
  });
  // What the reply asks for is added in its commit's write (decision 0051), unless notes are to be kept
  // first (the remember stage writes them between the commit and the schedule).
  const definition = plan.record?.definition?.hash;
  const following = hasNotes(plan.journal)
    ? undefined
    : nextStepsOf(turn, plan.journal, member, definition ?? turnDefinition(turn));
  return commitThen(
    {
      op: 'run',
      request: {
        journalField: journalField.reply(n),
        plan,
        usageSums: {
          ...(isRunAgent(services, member, turnDefinition(turn)) ? { agent: member } : {}),
          treeRoot: treeRootOf(record),
        },
        expectedRev: stored.rev,
        expectedChatLength: chat.length,
        ...(following ? { next: following } : {}),
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
        // The definition the run works under from now on (an upgrade moved it, or an earlier commit did).
        // An earlier execution's commit ('done') decided for itself: this one's decision is dropped.
        if (result.status !== 'ok') {
          const { upgrade: _dropped, ...rest } = turn;
          return next<Turn>({ ...rest, recorded: { entry, sender: member } });
        }
        const enqueued = result.enqueued === true;
        return next<Turn>({ ...turn, recorded: { entry, sender: member, definition, enqueued } });
      },
    },
  );
}

/**
 * The effects' after phase over a model reply of the agent (decision 0044), decided here, before the reply's
 * commit, and recorded with it: a step that runs again after the commit finds the entry and goes on from it.
 */
function afterPhase(turn: Turn, parts: Part[], decided: ReplyDecision, now: string) {
  const { input, reply, member, agent, stored } = turn;
  if (!input || !agent || !reply?.model || member === undefined) return undefined;
  const decision = decided.kind;
  // An effect's ask is never made into a decision before the after phase: the phase makes it.
  if (decision === 'ask') throw new RatchetError('internal', 'the after phase runs before any question');
  return decideAfterReply({
    runId: stored.record.id,
    agent: member,
    iteration: turn.data.iteration,
    now,
    reply: replyMessage({
      run: stored.record,
      sender: member,
      iteration: turn.data.iteration,
      parts,
      usage: reply.usage,
      costUsd: reply.costUsd,
      now,
    }),
    decision,
    chat: turn.plan ? [...turn.chat, ...turn.plan.inject] : turn.chat,
    runStart: input.runStart,
    tokens: turn.plan?.tokens ?? 0,
    contextWindow: input.contextWindow,
    effects: input.effects,
    canRemember: agent.toolboxes.some((toolbox) => toolbox.keepNote !== undefined),
    // The run goes on after calls or a sent-back answer; after an answer only with an iteration left.
    canAsk:
      decision === 'tools' ||
      decision === 'retry' ||
      (decision === 'final' && turn.data.iteration < reply.maxIterations),
  });
}
