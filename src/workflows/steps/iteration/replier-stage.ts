import { handoffState } from '../../core/handoff.js';
import { decideUpgrade, type UpgradeDecision } from '../../core/upgrade-decision.js';
import { isRunAgent, runAgent, runGroup } from '../runner/agent-runtime.js';
import { next, type StageResult } from './stage-pipeline.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The replier stage: who makes the iteration's reply. An earlier execution may have recorded it (then only
 * what it asks for is scheduled); otherwise the run's agent replies, or, in a handoff group, the member in
 * control: an agent replies through its model, a team or group in control through a child run.
 */
export function replierStage(given: Turn): StageResult<Turn> {
  let turn = given;
  const { context, loaded, stored, chat } = turn;
  const { services } = context;
  const { record } = stored;
  if (loaded.reply) {
    // Who made the reply: the run's agent, or the member of a handoff group in control then.
    const sender = chat[loaded.reply.index]?.sender ?? record.agent;
    return next({ ...turn, recorded: { entry: loaded.reply, sender } });
  }
  const upgrade = upgradeOf(turn);
  if (upgrade) turn = { ...turn, upgrade };
  const definition = turnDefinition(turn);
  const group = runGroup(services, record.agent, definition);
  const member = group ? handoffState(chat, record.id, group.members).active : record.agent;
  // A team or group in control of a handoff group answers as one member: a child run of its own.
  if (group && !isRunAgent(services, member, definition)) return next({ ...turn, member });
  return next({
    ...turn,
    member,
    agent: runAgent(services, member, record.lineage, group?.name, definition),
  });
}

/**
 * Whether the run moves to its worker's current definition at this iteration (decision 0030): decided
 * before anything of the iteration is done, committed with its reply (so once, whatever crashes).
 */
function upgradeOf(turn: Turn): UpgradeDecision | undefined {
  const { definitions } = turn.context.services;
  const { record } = turn.stored;
  if (!definitions || !record.definition) return undefined;
  const recorded = definitions.pinned(record.definition.hash)?.definition;
  if (!recorded) return undefined;
  return decideUpgrade({
    run: record,
    recorded,
    current: definitions.current(recorded.name),
    requestedAt: turn.loaded.upgradeRequestedAt,
  });
}
