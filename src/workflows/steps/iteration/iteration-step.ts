import { type IterationJobData, iterationJobDataSchema } from '../../job-data.js';
import { isFinished } from '../../run-record.js';
import { done, type StepAction, wakeParent } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import { defineStepKind, type StepKind } from '../runner/step-kind.js';
import { logRunStart } from '../runner/step-runner.js';
import { commitFallbackResults, loadIteration } from './iteration-load.js';
import { replyStage } from './replier-stage.js';
import type { Stored } from './turn.js';

/**
 * One ReAct iteration: append the previous iteration's tool results (in call order), call the model once,
 * record its reply, and add what comes next. Each part is journaled, so running it again does nothing twice;
 * the commits and the adding are the runner's (step-runner.ts), on what this step decides.
 *
 * The stages, each a file of its own, in the order one iteration's data goes through them:
 * 1. load and results (iteration-load.ts): the run, the journal and the chat in one round trip; the lost
 *    tool results appended (commit `results:<n-1>`);
 * 2. the reply (iteration-reply.ts): the recorded one, or a child run's, or the agent's model's after:
 * 3. sub-goal moves (iteration-goals.ts, commit `goals:<n>`);
 * 4. the request planned with the effects, a compaction when due (iteration-request.ts, commit
 *    `compact:<n>:<up_to>`);
 * 5. the budget (iteration-budget.ts, commit `budget-raise:<k>`);
 * 6. the model call through the agent's middleware (iteration-model-call.ts, model-call-middleware.ts);
 * 7. the decision on the reply and its commit (iteration-commit.ts, commit `reply:<n>`);
 * 8. what the recorded reply asks for (iteration-schedule.ts).
 */
async function execute(context: StepContext, data: IterationJobData): Promise<StepAction> {
  const loaded = await loadIteration(context, data);
  if (!loaded.run) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return done;
  }
  const stored: Stored = loaded.run;
  const { record } = stored;
  // A later iteration already committed, or the run is over: this is a stale retry. A finished child run
  // wakes its parent again, in case a crash came between its last commit and the wake-up.
  if (isFinished(record.status)) return wakeParent(record);
  if (record.iteration > data.iteration) return done;
  logRunStart(context, record);
  const turn = { context, data, loaded, stored, chat: loaded.chat };
  if (data.previous_calls === 0 || loaded.resultsDone) return replyStage(turn);
  return commitFallbackResults(context, data, loaded, stored, (chat) => replyStage({ ...turn, chat }));
}

export const iterationStep: StepKind<IterationJobData> = defineStepKind({
  name: 'iteration',
  dataSchema: iterationJobDataSchema,
  describe: (data) => ({ agent: data.agent, iteration: data.iteration }),
  label: (data) => `iteration ${data.iteration}`,
  run: execute,
});
