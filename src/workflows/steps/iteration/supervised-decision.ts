import type { ReplyDecision } from '../../core/reply-decision.js';
import type { replyCommit } from '../../core/run-commits.js';
import {
  goalsAfterReply,
  goalsProgress,
  partialAnswer,
  type SupervisorLimits,
  unfinishedReason,
} from '../../core/supervisor.js';
import type { RunRecord } from '../../run-record.js';

/**
 * A supervisor's reply: its calls move its sub-goals (a declaration, its own update, a delegation that starts
 * one). A reply that asks for delegations past max_orchestration_steps ends the run with what it has, partial;
 * a final answer with sub-goals not all completed is partial too.
 */
export function supervisedDecision(
  record: RunRecord,
  decision: ReplyDecision,
  limits: SupervisorLimits,
  goalsMoved: boolean,
): { decision: ReplyDecision; supervisor: NonNullable<Parameters<typeof replyCommit>[0]['supervisor']> } {
  const after = goalsAfterReply(record.sub_goals, decision.kind === 'tools' ? decision.calls : [], limits);
  const steps = record.orchestration_steps + after.delegations;
  if (decision.kind === 'tools' && steps > limits.maxOrchestrationSteps) {
    const reason =
      `max_orchestration_steps (${limits.maxOrchestrationSteps}) reached: ${record.orchestration_steps} ` +
      `delegation(s) made and the reply asked for ${after.delegations} more`;
    return {
      decision: { kind: 'final', result: partialAnswer(record.sub_goals, reason), partial: { reason } },
      supervisor: {
        goals: record.sub_goals,
        orchestrationSteps: record.orchestration_steps,
        progress: goalsMoved && record.sub_goals ? goalsProgress(record.sub_goals) : undefined,
      },
    };
  }
  const unfinished = decision.kind === 'final' ? unfinishedReason(after.goals) : undefined;
  const changed = (after.changed || goalsMoved) && after.goals !== null;
  return {
    decision:
      decision.kind === 'final' && unfinished && !decision.partial
        ? { ...decision, partial: { reason: unfinished } }
        : decision,
    supervisor: {
      goals: after.goals,
      orchestrationSteps: steps,
      progress:
        changed && after.goals
          ? goalsProgress(after.goals, after.warnings.length > 0 ? after.warnings.join('; ') : undefined)
          : undefined,
    },
  };
}
