import { decodeChatEntries, type Message } from '../../chat/index.js';
import { isLlmCoordinator } from '../../config/index.js';
import { RatchetError } from '../../errors/index.js';
import { costOf } from '../../models/pricing.js';
import { addUsage, type Usage, zeroUsage } from '../../models/usage.js';
import { parseJsonRecord } from '../../schemas/parse.js';
import { coordinatorSelection } from '../core/coordinators.js';
import { completionCommit, messageAddedEvent } from '../core/run-commits.js';
import {
  answerMessages,
  initialTeamState,
  type Selection,
  syncForMember,
  type TeamState,
  teamResult,
} from '../core/team.js';
import { type TeamTurnJobData, teamTurnJobDataSchema } from '../job-data.js';
import { journalField, type TeamSelectionEntry, teamSelectionSchema, teamStateSchema } from '../journal.js';
import { isFinished, type RunRecord } from '../run-record.js';
import { awaitChildRuns, type ChildState, type ChildTask } from './child-wait.js';
import { failRun } from './run-failures.js';
import { commit, done, enqueue, isPark, type StepAction, wakeParent } from './step-action.js';
import type { StepContext, TeamService } from './step-context.js';
import { defineStepKind, type StepKind } from './step-kind.js';
import { logRunStart } from './step-runner.js';
import { chooseMembers } from './team-coordinator.js';

interface LoadedTurn {
  record: RunRecord;
  rev: number;
  state: TeamState;
  turnDone: boolean;
  selection: TeamSelectionEntry | undefined;
  shared: Message[];
}

async function loadTurn(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
): Promise<LoadedTurn | undefined> {
  const chat = context.write.chatKey;
  const n = data.iteration;
  const {
    run: stored,
    journal,
    entries,
  } = await context.store.loadWithChat([
    journalField.teamTurn(n - 1),
    journalField.teamTurn(n),
    journalField.teamSelection(n),
  ]);
  if (!stored) return undefined;
  const [previous, done, selection] = journal;
  const state = previous
    ? parseJsonRecord(teamStateSchema, previous, `journal team:${n - 1} of ${data.run_id}`)
    : { v: 1 as const, ...initialTeamState(team) };
  return {
    record: stored.record,
    rev: stored.rev,
    state: { turns: state.turns, cursors: state.cursors },
    turnDone: done !== null && done !== undefined,
    selection: selection
      ? parseJsonRecord(teamSelectionSchema, selection, `journal team-select:${n} of ${data.run_id}`)
      : undefined,
    shared: decodeChatEntries(entries, chat),
  };
}

/**
 * One turn of a team run: the coordinator chooses members; each acts as a child run on its private chat,
 * given what happened in the shared chat since its last turn; their final answers go to the shared chat in
 * selection order; the next turn is added. While members act the step is parked (no worker held).
 */
async function executeTeamTurn(context: StepContext, data: TeamTurnJobData): Promise<StepAction> {
  const { services } = context;
  const team = services.teams.get(data.agent);
  if (!team)
    throw new RatchetError('agent_not_found', `team "${data.agent}" is not configured on this worker`);
  const loaded = await loadTurn(context, data, team);
  if (!loaded) {
    context.logger.warn('the run of this step does not exist (never created, or deleted): nothing to do');
    return done;
  }
  if (isFinished(loaded.record.status)) return wakeParent(loaded.record);
  logRunStart(context, loaded.record);
  if (loaded.turnDone) return nextTurn(data, loaded.record);
  if (loaded.selection) return afterSelection(context, data, team, loaded, selectionOf(loaded.selection));
  return decide(context, data, team, loaded);
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

/** Turn n + 1 of the team's run. */
function nextTurn(data: TeamTurnJobData, record: RunRecord): StepAction {
  return enqueue([
    {
      kind: 'team_turn',
      data: {
        v: 1,
        session_id: data.session_id,
        run_id: data.run_id,
        agent: record.agent,
        chat_id: record.chat_id,
        iteration: data.iteration + 1,
        ...(record.lineage.length > 0 ? { lineage: record.lineage } : {}),
        ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
      },
    },
  ]);
}

/**
 * The coordinator's choice for this turn, recorded once before any member starts: a step that runs again
 * (after a crash, or woken when members finish) acts on the same choice, even when what it was made from
 * (the session's state, a model's answer) has changed since.
 */
async function decide(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
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
    if (selection.kind !== 'act') return afterSelection(context, data, team, loaded, selection);
    choice = { entry: { v: 1, members: selection.members, done: false }, usage: { ...zeroUsage } };
  } else {
    if (coordinator.max_rounds > 0 && loaded.state.turns >= coordinator.max_rounds) {
      return afterSelection(context, data, team, loaded, {
        kind: 'failed',
        code: 'max_rounds',
        message: `team "${team.name}" reached max_rounds (${coordinator.max_rounds}) without its coordinator saying done`,
      });
    }
    const chosen = await chooseMembers(context, data, team, loaded.shared, loaded.record);
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
        ...(agent ? { agentUsageKey: context.store.agentUsageKey(agent.name) } : {}),
        treeUsageKey: context.store.treeUsageKey(loaded.record),
        expectedRev: loaded.rev,
      },
    },
    {
      what: 'recording the coordinator choice',
      andThen: (result) => {
        if (result.status === 'ok') {
          const chosen = { ...loaded, record, rev: loaded.rev + 1 };
          return afterSelection(context, data, team, chosen, selectionOf(choice.entry));
        }
        if (result.status === 'done') {
          const entry = parseJsonRecord(teamSelectionSchema, result.value, `journal team-select:${n}`);
          return afterSelection(context, data, team, loaded, selectionOf(entry));
        }
        throw new RatchetError('internal', `recording the coordinator choice: ${JSON.stringify(result)}`, {
          retryable: true,
        });
      },
    },
  );
}

function selectionOf(entry: TeamSelectionEntry): Selection {
  return entry.done || entry.members.length === 0
    ? { kind: 'done' }
    : { kind: 'act', members: entry.members };
}

/** The session's shared state hash (the `state` toolbox's blackboard). */
/** The turn of each selected member: a child run on its private chat, given its synced view. */
function memberTurns(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
  selected: readonly number[],
): ChildTask[] {
  const { services } = context;
  return selected.map((index) => {
    const member = team.members[index];
    if (!member) throw new RatchetError('record_invalid', `team ${team.name} has no member ${index}`);
    return {
      agent: member.agent,
      task: '',
      turn: {
        chatId: `${data.run_id}-m${index}`,
        messages: (childRunId: string) => {
          const now = services.now().toISOString();
          const synced = syncForMember(
            loaded.shared,
            loaded.state.cursors[index] ?? 0,
            member.agent,
            (position) => `${childRunId}-in${position}`,
          );
          return synced.length > 0
            ? synced
            : [
                {
                  id: `${childRunId}-in0`,
                  sender: 'user',
                  role: 'user',
                  parts: [{ type: 'text', text: 'Nothing new since your last turn: continue.' }],
                  metadata: {},
                  created_at: now,
                },
              ];
        },
      },
    };
  });
}

/** The members' answers go to the shared chat in selection order, with the team's state after the turn. */
function commitTurn(
  context: StepContext,
  data: TeamTurnJobData,
  loaded: LoadedTurn,
  selected: readonly number[],
  states: readonly ChildState[],
): StepAction {
  const { services } = context;
  const now = services.now().toISOString();
  const messages = answerMessages({
    runId: data.run_id,
    turn: data.iteration,
    answers: states.map((member) => ({
      agent: member.agent,
      text: member.result ?? '',
      runId: member.runId,
    })),
    now,
  });
  const cursors = [...loaded.state.cursors];
  for (const index of selected) cursors[index] = loaded.shared.length;
  const record: RunRecord = {
    ...loaded.record,
    status: 'running',
    iteration: data.iteration,
    updated_at: now,
    started_at: loaded.record.started_at ?? now,
  };
  return commit(
    {
      op: 'run',
      request: {
        journalField: journalField.teamTurn(data.iteration),
        plan: {
          journal: { v: 1, turns: loaded.state.turns + 1, cursors },
          record,
          messages,
          events: messages.map((message, offset) =>
            messageAddedEvent(record, message, loaded.shared.length + offset, now),
          ),
          finished: false,
        },
        expectedRev: loaded.rev,
        expectedChatLength: loaded.shared.length,
      },
    },
    {
      what: 'recording the team turn',
      before: 'team.before_turn_commit',
      after: 'team.after_turn_commit',
      andThen: (result) => {
        if (result.status !== 'ok' && result.status !== 'done' && result.status !== 'run_finished')
          throw new RatchetError('internal', `recording the team turn: ${JSON.stringify(result)}`, {
            retryable: true,
          });
        return nextTurn(data, loaded.record);
      },
    },
  );
}

/** A team's turn: its own step kind, with a run's failure semantics (a final failure fails the team's run). */
export const teamTurnStep: StepKind<TeamTurnJobData> = defineStepKind({
  name: 'team-turn',
  dataSchema: teamTurnJobDataSchema,
  describe: (data) => ({ team: data.agent, turn: data.iteration }),
  label: (data) => `team turn ${data.iteration}`,
  run: executeTeamTurn,
});
