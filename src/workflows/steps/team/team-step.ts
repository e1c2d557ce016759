import { RatchetError } from '../../../errors/index.js';
import { completionCommit } from '../../core/run-commits.js';
import { type Selection, teamResult } from '../../core/team.js';
import { type TeamTurnJobData, teamTurnJobDataSchema } from '../../job-data.js';
import { journalField } from '../../journal.js';
import { isFinished } from '../../run-record.js';
import { admissionWait } from '../runner/admission-wait.js';
import { runTeam } from '../runner/agent-runtime.js';
import { awaitChildRuns } from '../runner/child-wait.js';
import { failRun } from '../runner/run-failures.js';
import { commit, done, type StepAction, wakeParent } from '../runner/step-action.js';
import type { StepContext, TeamService } from '../runner/step-context.js';
import { defineStepKind, type StepKind } from '../runner/step-kind.js';
import { logRunStart } from '../runner/step-runner.js';
import { endedWorkerWait } from '../runner/worker-wait.js';
import { commitTurn, memberTurns, nextTurn } from './team-members.js';
import { decide } from './team-selection.js';
import { type LoadedTurn, loadTurn, selectionOf } from './team-turn-load.js';

/**
 * One turn of a team run: the coordinator chooses members; each acts as a child run on its private chat,
 * given what happened in the shared chat since its last turn; their final answers go to the shared chat in
 * selection order; the next turn is added. While members act the step is parked (no worker held).
 */
async function executeTeamTurn(
  context: StepContext,
  data: TeamTurnJobData,
  reloaded = false,
): Promise<StepAction> {
  const { services } = context;
  const team = runTeam(services, data.agent, data.definition);
  const loaded = await loadTurn(context, data, team);
  if (!loaded) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return done;
  }
  // The run waited for a worker and this one serves it: the wait ends first (decision 0031).
  if (!reloaded && (await endedWorkerWait(context, loaded.record)))
    return executeTeamTurn(context, data, true);
  if (isFinished(loaded.record.status)) return wakeParent(loaded.record);
  const queued = await admissionWait(context, loaded.record);
  if (queued) return queued;
  logRunStart(context, loaded.record);
  if (loaded.turnDone) return nextTurn(data, loaded.record);
  if (loaded.selection) return afterSelection(context, data, team, loaded, selectionOf(loaded.selection));
  return decide(context, data, team, loaded, (after, selection) =>
    afterSelection(context, data, team, after, selection),
  );
}

/** The coordinator's choice made: finish the run, fail it, or let the members act. */
async function afterSelection(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
  selection: Selection,
): Promise<StepAction> {
  const { services } = context;
  const n = data.iteration;
  if (selection.kind === 'failed')
    return failRun(context, data, new RatchetError(selection.code as 'max_rounds', selection.message));
  if (selection.kind === 'done') {
    const now = services.now().toISOString();
    // The record as the coordinator's commit left it.
    const plan = completionCommit(loaded.record, { v: 1, at: now }, teamResult(loaded.shared), now);
    return commit(
      { op: 'run', request: { journalField: journalField.teamTurn(n), plan, expectedRev: loaded.rev } },
      {
        what: 'finishing the team run',
        andThen: (result) => {
          if (result.status === 'conflict')
            throw new RatchetError('internal', 'finishing the team run: the run changed meanwhile', {
              retryable: true,
            });
          return wakeParent(loaded.record);
        },
      },
    );
  }
  const outcome = await awaitChildRuns(context, {
    parent: loaded.record,
    lineage: [],
    inherited: data.inherited,
    tasks: memberTurns(context, data, team, loaded, selection.members),
  });
  if (outcome.kind === 'waiting') return outcome.park;
  if (outcome.kind === 'failed') {
    const { failed } = outcome;
    const why = failed.error ?? `its run ended ${failed.status}`;
    return failRun(
      context,
      data,
      new RatchetError(
        'member_failed',
        `team member ${failed.agent} (run ${failed.runId}) ${failed.status}: ${why}`,
      ),
    );
  }
  return commitTurn(context, data, loaded, selection.members, outcome.states);
}

/** A team's turn: its own step kind, with a run's failure semantics (a final failure fails the team's run). */
export const teamTurnStep: StepKind<TeamTurnJobData> = defineStepKind({
  name: 'team-turn',
  dataSchema: teamTurnJobDataSchema,
  describe: (data) => ({ team: data.agent, turn: data.iteration }),
  label: (data) => `team turn ${data.iteration}`,
  run: (context, data) => executeTeamTurn(context, data),
});
