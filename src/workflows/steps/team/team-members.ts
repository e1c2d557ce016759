import { RatchetError } from '../../../errors/index.js';
import { memberDefinitionOf } from '../../agent-definition.js';
import { messageAddedEvent } from '../../core/run-commits.js';
import { answerMessages, syncForMember } from '../../core/team.js';
import type { TeamTurnJobData } from '../../job-data.js';
import { journalField } from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import { pinnedDefinition } from '../runner/agent-runtime.js';
import type { ChildState, ChildTask } from '../runner/child-wait.js';
import { commit, enqueue, type StepAction } from '../runner/step-action.js';
import type { PinnedDefinition, StepContext, TeamService } from '../runner/step-context.js';
import type { LoadedTurn } from './team-turn-load.js';

/**
 * The members' side of a team's turn: each selected member acts as a child run on its private chat, given
 * what happened in the shared chat since its last turn; their answers go to the shared chat in selection
 * order (commit `team:<n>`), and the next turn is added.
 */

/** The turn of each selected member: a child run on its private chat, given its synced view. */
export function memberTurns(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
  loaded: LoadedTurn,
  selected: readonly number[],
): ChildTask[] {
  const { services } = context;
  const pinned = pinnedDefinition(services, data.definition);
  return selected.map((index) => {
    const member = team.members[index];
    if (!member) throw new RatchetError('record_invalid', `team ${team.name} has no member ${index}`);
    return {
      agent: member.agent,
      task: '',
      ...(pinned ? { recorded: recordedMember(pinned, member.agent) } : {}),
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

/**
 * A member of a team whose run is pinned to its recorded definition (decision 0030): the member's run records
 * the member as the team's definition has it, whatever this worker's config now says of that name.
 */
function recordedMember(pinned: PinnedDefinition, agent: string): ChildTask['recorded'] {
  const definition = memberDefinitionOf(pinned.definition, agent);
  const runtime = pinned.agent(agent);
  if (!definition || !runtime) {
    throw new RatchetError(
      'record_invalid',
      `the recorded definition of team ${pinned.definition.name} has no member "${agent}"`,
    );
  }
  return {
    definition: { hash: definition.hash, text: definition.text },
    prefix: runtime.prefix,
    timeoutS: runtime.timeoutS,
  };
}

/** The members' answers go to the shared chat in selection order, with the team's state after the turn. */
export function commitTurn(
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

/** Turn n + 1 of the team's run. */
export function nextTurn(data: TeamTurnJobData, record: RunRecord): StepAction {
  return enqueue([
    {
      kind: 'team_turn',
      data: {
        v: 2,
        session_id: data.session_id,
        run_id: data.run_id,
        agent: record.agent,
        chat_id: record.chat_id,
        iteration: data.iteration + 1,
        ...(record.lineage.length > 0 ? { lineage: record.lineage } : {}),
        ...(record.deadline_at ? { deadline_at: record.deadline_at } : {}),
        // The team's recorded definition goes with every turn, as with every step of a run (decision 0030).
        ...(record.definition ? { definition: record.definition.hash } : {}),
        ...(data.inherited ? { inherited: data.inherited } : {}),
      },
    },
  ]);
}
