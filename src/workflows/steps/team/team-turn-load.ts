import type { Message } from '../../../chat/index.js';
import { isLlmCoordinator } from '../../../config/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { initialTeamState, type Selection, type TeamState } from '../../core/team.js';
import type { TeamTurnJobData } from '../../job-data.js';
import {
  journalField,
  type TeamSelectionEntry,
  teamSelectionSchema,
  teamStateSchema,
} from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import type { StepContext, TeamService } from '../runner/step-context.js';

/** What one round trip read for a team's turn: the run, the team's state, the turn's journal, the shared chat. */
export interface LoadedTurn {
  record: RunRecord;
  rev: number;
  state: TeamState;
  turnDone: boolean;
  selection: TeamSelectionEntry | undefined;
  shared: Message[];
  /**
   * The `llm` coordinator's recorded decisions of the earlier turns its window can show, by turn (each turn
   * adds at least one shared message, so no turn before n - window): empty for other coordinators.
   */
  decisions: Map<number, TeamSelectionEntry>;
}

export async function loadTurn(
  context: StepContext,
  data: TeamTurnJobData,
  team: TeamService,
): Promise<LoadedTurn | undefined> {
  const n = data.iteration;
  const { coordinator } = team;
  const earliest = isLlmCoordinator(coordinator) ? Math.max(1, n - coordinator.window) : n;
  const earlier = Array.from({ length: n - earliest }, (_, offset) => earliest + offset);
  const {
    run: stored,
    journal,
    chat,
  } = await context.store.loadWithChat([
    journalField.teamTurn(n - 1),
    journalField.teamTurn(n),
    journalField.teamSelection(n),
    ...earlier.map((turn) => journalField.teamSelection(turn)),
  ]);
  if (!stored) return undefined;
  const [previous, done, selection, ...decided] = journal;
  const decisions = new Map<number, TeamSelectionEntry>();
  for (const [index, value] of decided.entries()) {
    const turn = earlier[index] ?? 0;
    if (typeof value === 'string')
      decisions.set(
        turn,
        parseJsonRecord(teamSelectionSchema, value, `journal team-select:${turn} of ${data.run_id}`),
      );
  }
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
    shared: chat,
    decisions,
  };
}

/** A recorded choice of members, as the turn acts on it. */
export function selectionOf(entry: TeamSelectionEntry): Selection {
  return entry.done || entry.members.length === 0
    ? { kind: 'done' }
    : { kind: 'act', members: entry.members };
}
