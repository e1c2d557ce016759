import { isLlmCoordinator } from '../../../config/index.js';
import { RatchetError } from '../../../errors/index.js';
import { costOf } from '../../../models/pricing.js';
import { addUsage, type Usage, zeroUsage } from '../../../models/usage.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { coordinatorSelection } from '../../core/coordinators.js';
import type { Selection } from '../../core/team.js';
import type { TeamTurnJobData } from '../../job-data.js';
import { journalField, type TeamSelectionEntry, teamSelectionSchema } from '../../journal.js';
import { type RunRecord, treeRootOf } from '../../run-record.js';
import { commit, isPark, type StepAction } from '../runner/step-action.js';
import type { StepContext, TeamService } from '../runner/step-context.js';
import { chooseMembers } from './team-coordinator.js';
import { type LoadedTurn, selectionOf } from './team-turn-load.js';

/** What the turn does with a selection: finish, fail, or let the members act (team-step.ts). */
export type AfterSelection = (loaded: LoadedTurn, selection: Selection) => Promise<StepAction>;

/**
 * The coordinator's choice for this turn, recorded once before any member starts: a step that runs again
 * (after a crash, or woken when members finish) acts on the same choice, even when what it was made from
 * (the session's state, a model's answer) has changed since.
 */
export async function decide(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
  afterSelection: AfterSelection,
): Promise<StepAction> {
  const { services } = context;
  const { coordinator } = team;
  let choice: { entry: TeamSelectionEntry; usage: Usage };
  if (!isLlmCoordinator(coordinator)) {
    const selection = await coordinatorSelection({
      team,
      state: loaded.state,
      shared: loaded.shared,
      readState: (key) => context.store.sessionData.readState(key),
      step: {
        sessionId: data.session_id,
        runId: data.run_id,
        agent: data.agent,
        iteration: data.iteration,
        now: loaded.record.updated_at,
      },
    });
    // Ending the run is itself recorded once: only a choice of members needs remembering.
    if (selection.kind !== 'act') return afterSelection(loaded, selection);
    choice = { entry: { v: 1, members: selection.members, done: false }, usage: { ...zeroUsage } };
  } else {
    if (coordinator.max_rounds > 0 && loaded.state.turns >= coordinator.max_rounds) {
      return afterSelection(loaded, {
        kind: 'failed',
        code: 'max_rounds',
        message: `team "${team.name}" reached max_rounds (${coordinator.max_rounds}) without its coordinator saying done`,
      });
    }
    const chosen = await chooseMembers(context, data, team, loaded);
    if (isPark(chosen)) return chosen;
    choice = chosen;
  }
  const n = data.iteration;
  const now = services.now().toISOString();
  const agent = team.coordinatorAgent;
  const costUsd = agent ? costOf(choice.usage, agent.provider.price) : 0;
  const record: RunRecord = {
    ...loaded.record,
    usage: addUsage(loaded.record.usage, choice.usage),
    cost_usd: loaded.record.cost_usd + costUsd,
    updated_at: now,
    started_at: loaded.record.started_at ?? now,
    status: 'running',
  };
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.teamSelection(n),
        plan: {
          journal: choice.entry,
          record,
          messages: [],
          events: [],
          finished: false,
          ...(agent ? { usage: { ...choice.usage, cost_usd: costUsd } } : {}),
        },
        usageSums: { ...(agent ? { agent: agent.name } : {}), treeRoot: treeRootOf(loaded.record) },
        expectedRev: loaded.rev,
      },
    },
    {
      what: 'recording the coordinator choice',
      before: 'team.before_selection_commit',
      after: 'team.after_selection_commit',
      andThen: (result) => {
        if (result.status === 'ok') {
          const chosen = { ...loaded, record, rev: loaded.rev + 1 };
          return afterSelection(chosen, selectionOf(choice.entry));
        }
        if (result.status === 'done') {
          const entry = parseJsonRecord(teamSelectionSchema, result.value, `journal team-select:${n}`);
          return afterSelection(loaded, selectionOf(entry));
        }
        throw new RatchetError('internal', `recording the coordinator choice: ${JSON.stringify(result)}`, {
          retryable: true,
        });
      },
    },
  );
}
