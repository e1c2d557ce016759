import { type IterationJobData, iterationJobDataSchema } from '../../job-data.js';
import { isFinished } from '../../run-record.js';
import { admissionWait } from '../runner/admission-wait.js';
import { done, type StepAction, wakeParent } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import { defineStepKind, type StepKind } from '../runner/step-kind.js';
import { logRunStart } from '../runner/step-runner.js';
import { endedWorkerWait } from '../runner/worker-wait.js';
import { budgetStage } from './budget-stage.js';
import { compactionStage } from './compaction-stage.js';
import { effectAnswerStage } from './effect-answer-stage.js';
import { goalsStage } from './goals-stage.js';
import { loadIteration } from './iteration-load.js';
import { memberReplyStage } from './member-reply-stage.js';
import { returnUnusedCount } from './model-call-count.js';
import { modelCallStage } from './model-call-stage.js';
import { planStage } from './plan-stage.js';
import { keepNotes, rememberStage } from './remember-stage.js';
import { replierStage } from './replier-stage.js';
import { replyCommitStage } from './reply-commit-stage.js';
import { requestStage } from './request-stage.js';
import { resultsStage } from './results-stage.js';
import { scheduleStage } from './schedule-stage.js';
import { pipeline, repeatWhile } from './stage-pipeline.js';
import { steerStage } from './steer-stage.js';
import type { LoadedIteration, Turn } from './turn.js';

/**
 * One ReAct iteration: append the previous iteration's tool results (in call order), call the model once,
 * record its reply, and add what comes next. Each part is journaled, so running it again does nothing twice;
 * the commits and the adding are the runner's (step-runner.ts), on what the stages decide.
 *
 * The stages, in order. Each takes the turn (turn.ts) and ends the step, or goes on with the turn grown by
 * what it added, after a commit of its own where it names one (the staged commits of decision 0010). A
 * stage with nothing to do for this turn passes it on: a reply recorded by an earlier execution goes
 * straight to the schedule; a child run's reply or a supervisor's summary skips the model call.
 */
const iteration = pipeline<Turn>([
  resultsStage, // the previous iteration's results no outcome commit appended (`results:<n-1>`)
  steerStage, // the messages steered into the run since its last model call (`steered:<n>`)
  effectAnswerStage, // the answer to a question an effect asked after the previous reply (`effect-answer:<n>`)
  replierStage, // who replies: the reply recorded earlier, a team or group in control, or an agent
  memberReplyStage, // a team or group in control replies through a child run
  goalsStage, // a supervisor's sub-goals moved by its delegations (`goals:<n>`), or their summary
  requestStage, // what the agent's model is asked from
  repeatWhile(awaitsModelReply, [
    planStage, // the request planned by the agent's effects, or a compaction first
    compactionStage, // the summary, and the chat's new context view (`compact:<n>:<up_to>`)
    budgetStage, // the run's and the agent's budget, raised by a person when it asks (`budget-raise:<k>`)
    modelCallStage, // the model through the agent's middleware; a request too long: compaction, again
  ]),
  replyCommitStage, // the decision on the reply, recorded (`reply:<n>`)
  rememberStage, // the notes the effects' after phase asked the agent's memory to keep, written once
  scheduleStage, // what the recorded reply asks for: its tool calls, another answer, the parent's wake-up
]);

/** The agent's model is to reply and has not yet. */
function awaitsModelReply(turn: Turn): boolean {
  return turn.input !== undefined && turn.reply === undefined;
}

async function execute(context: StepContext, data: IterationJobData, reloaded = false): Promise<StepAction> {
  const loaded = await loadIteration(context, data);
  try {
    return await executeLoaded(context, data, loaded, reloaded);
  } finally {
    // The load counted a model call this execution did not make (it parked, waited, or replied without one).
    await returnUnusedCount(context, loaded.modelCallCount);
  }
}

async function executeLoaded(
  context: StepContext,
  data: IterationJobData,
  loaded: LoadedIteration,
  reloaded: boolean,
): Promise<StepAction> {
  if (!loaded.run) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return done;
  }
  const { record } = loaded.run;
  // The run waited for a worker and this one serves it: the wait ends first (decision 0031).
  if (!reloaded && (await endedWorkerWait(context, record))) return execute(context, data, true);
  // A later iteration already committed, or the run is over: this is a stale retry. A finished child run
  // wakes its parent again, in case a crash came between its last commit and the wake-up.
  if (isFinished(record.status)) {
    // The reply that finished the run may have asked the agent's memory to keep a note: a crash may have
    // come between its commit and the write, which is made once per call key.
    if (loaded.reply && record.iteration === data.iteration)
      await keepNotes(
        context,
        record,
        data.iteration,
        loaded.reply,
        loaded.chat[loaded.reply.index]?.sender ?? record.agent,
        context.services.agents.get(record.agent)?.toolboxes ?? [],
      );
    return wakeParent(record);
  }
  if (record.iteration > data.iteration) return done;
  const queued = await admissionWait(context, record);
  if (queued) return queued;
  logRunStart(context, record);
  // The job names the definition the step was added under; an upgrade may have moved the run since.
  const definition = record.definition?.hash;
  if (definition !== undefined && definition !== data.definition)
    await context.services.definitions?.prepare(definition);
  return iteration.run({ context, data, loaded, stored: loaded.run, chat: loaded.chat });
}

export const iterationStep: StepKind<IterationJobData> = defineStepKind({
  name: 'iteration',
  dataSchema: iterationJobDataSchema,
  describe: (data) => ({ agent: data.agent, iteration: data.iteration }),
  label: (data) => `iteration ${data.iteration}`,
  run: (context, data) => execute(context, data),
});
