import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { buildEvent } from '../../../events/event.js';
import { zeroUsage } from '../../../models/usage.js';
import {
  allCompleted,
  autoCompleteAnswer,
  goalsAfterResults,
  goalsProgress,
  previousCallsAndResults,
} from '../../core/supervisor.js';
import { crashPoint } from '../../crash-points.js';
import { messageId } from '../../ids.js';
import { journalField } from '../../journal.js';
import type { RunRecord, SubGoal } from '../../run-record.js';
import { done } from '../runner/step-action.js';
import type { AgentRuntime } from '../runner/step-context.js';
import { commitThen, next, type StageResult } from './stage-pipeline.js';
import type { ReplyOfTurn, Turn } from './turn.js';

/**
 * The sub-goal stage of a supervisor's iteration: the results of its previous delegations move its
 * sub-goals (recorded once, in `goals:<n>`, before the model is asked what next), and when all are
 * completed the run finishes with their summary and no model call.
 */
export function goalsStage(turn: Turn): StageResult<Turn> {
  const { agent, stored, chat, data } = turn;
  const { record } = stored;
  if (!agent || turn.reply || !agent.supervisor || !record.sub_goals) return next(turn);
  const moved = movedGoals(record, chat, data.iteration);
  if (moved) return commitMovedGoals(turn, agent, moved);
  // Its own update_sub_goal completed the last one.
  if (allCompleted(record.sub_goals) && !agent.outputSchema)
    return next({ ...turn, reply: supervisorSummary(agent, record, false) });
  return next(turn);
}

/** The sub-goals the results of the previous iteration's delegations moved, or undefined when none moved. */
function movedGoals(record: RunRecord, chat: readonly Message[], iteration: number): SubGoal[] | undefined {
  if (!record.sub_goals) return undefined;
  const { calls, results } = previousCallsAndResults(chat, messageId.reply(record.id, iteration - 1));
  const moved = goalsAfterResults(record.sub_goals, calls, results);
  return moved.changed ? moved.goals : undefined;
}

/**
 * A supervisor's sub-goals moved by its delegations' results: when all are completed, the run finishes with
 * their summary and no model call; otherwise the move is recorded (with its progress event) once, before the
 * model is asked what next.
 */
function commitMovedGoals(turn: Turn, agent: AgentRuntime, goals: SubGoal[]): StageResult<Turn> {
  const { context, data, stored } = turn;
  const now = context.services.now().toISOString();
  const record: RunRecord = { ...stored.record, sub_goals: goals, updated_at: now };
  // A summary of its own is no structured answer: a supervisor with an output_schema is asked for one.
  if (allCompleted(goals) && !agent.outputSchema) {
    return next({
      ...turn,
      stored: { record, rev: stored.rev },
      reply: supervisorSummary(agent, record, true),
    });
  }
  crashPoint('iteration.before_goals_commit');
  return commitThen(
    {
      op: 'run',
      request: {
        journalField: journalField.subGoals(data.iteration),
        expectedRev: stored.rev,
        plan: {
          journal: { v: 1, at: now },
          record,
          messages: [],
          events: [buildEvent('progress', record, goalsProgress(goals), now)],
          finished: false,
        },
      },
    },
    {
      what: 'moving sub-goals',
      after: 'iteration.after_goals_commit',
      andThen: (result) => {
        if (result.status === 'run_finished') return done;
        if (result.status === 'ok') return next({ ...turn, stored: { record, rev: stored.rev + 1 } });
        // Moved by an earlier attempt, or the run moved on: read it again on the next attempt.
        throw new RatchetError(
          'internal',
          `moving the sub-goals of ${data.run_id}: ${JSON.stringify(result)}`,
          {
            retryable: true,
          },
        );
      },
    },
  );
}

/** Every sub-goal is completed: the run finishes with their summary, and no model call. */
function supervisorSummary(agent: AgentRuntime, record: RunRecord, goalsMoved: boolean): ReplyOfTurn {
  return {
    parts: [{ type: 'text', text: autoCompleteAnswer(record.sub_goals ?? []) }],
    usage: { ...zeroUsage },
    costUsd: 0,
    maxIterations: Number.POSITIVE_INFINITY,
    ...(agent.supervisor ? { supervisor: agent.supervisor } : {}),
    goalsMoved,
    noModelCall: true,
  };
}
