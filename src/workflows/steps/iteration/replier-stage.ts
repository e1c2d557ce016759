import { handoffState } from '../../core/handoff.js';
import type { DefinitionToRecord } from '../../core/run-creation.js';
import { decideUpgrade, type UpgradeDecision } from '../../core/upgrade-decision.js';
import { isRunAgent, runAgent, runGroup } from '../runner/agent-runtime.js';
import { next, type StageResult } from './stage-pipeline.js';
import { type Turn, turnDefinition } from './turn.js';

/**
 * The replier stage: who makes the iteration's reply. An earlier execution may have recorded it (then only
 * what it asks for is scheduled); otherwise the run's agent replies, or, in a handoff group, the member in
 * control: an agent replies through its model, a team or group in control through a child run.
 */
export async function replierStage(given: Turn): Promise<StageResult<Turn>> {
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
  if (upgrade) {
    // The definition the run moves to is recorded before the reply's commit names it (decision 0030), as a
    // run's first definition is before the run: another worker, of another generation, reads it by hash.
    const { decision, current } = upgrade;
    if (current && decision.to === current.hash && decision.to !== decision.from)
      await services.definitions?.record(current);
    turn = { ...turn, upgrade: decision };
  }
  const definition = turnDefinition(turn);
  const group = runGroup(services, record.agent, definition);
  const member = group ? handoffState(chat, record.id, group.members).active : record.agent;
  // A team or group in control of a handoff group answers as one member: a child run of its own.
  if (group && !isRunAgent(services, member, definition)) return next({ ...turn, member });
  return next({
    ...turn,
    member,
    agent: runAgent(services, member, record.lineage, group?.name, definition, turn.data.inherited),
  });
}

/**
 * Whether the run moves to its worker's current definition at this iteration (decision 0030): decided
 * before anything of the iteration is done, committed with its reply (so once, whatever crashes).
 */
function upgradeOf(
  turn: Turn,
): { decision: UpgradeDecision; current: DefinitionToRecord | undefined } | undefined {
  const { definitions } = turn.context.services;
  const { record } = turn.stored;
  if (!definitions || !record.definition) return undefined;
  const recorded = definitions.pinned(record.definition.hash)?.definition;
  if (!recorded) return undefined;
  const current = definitions.current(recorded.name);
  const decision = decideUpgrade({
    run: record,
    recorded,
    current,
    requestedAt: turn.loaded.upgradeRequestedAt,
  });
  return decision ? { decision, current } : undefined;
}
