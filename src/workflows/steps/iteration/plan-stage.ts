import { crashPoint } from '../../crash-points.js';
import { planRequest } from './context-effects.js';
import { next, type StageResult } from './stage-pipeline.js';
import type { Turn } from './turn.js';

/**
 * The plan stage: what the model is sent, planned by the agent's effects from persisted data (decision 0013):
 * the request, or a compaction first when one is due (then the request is planned again from the new view).
 */
export function planStage(turn: Turn): StageResult<Turn> {
  const { input } = turn;
  if (!input || turn.reply || turn.compaction || turn.plan) return next(turn);
  const plan = planRequest(input);
  if (plan.kind === 'compact') return next({ ...turn, compaction: plan });
  crashPoint('iteration.before_model_call');
  return next({ ...turn, plan, withinBudget: false });
}
