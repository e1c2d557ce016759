import type { Message } from '../../chat/index.js';
import type { CoordinatorConfig } from '../../config/index.js';
import type { CoordinatorDefinition, StopConditionDefinition } from '../../extensions/index.js';
import { canonicalJson } from './canonical-json.js';

/** A team as the engine runs it. */
export interface TeamRuntime {
  name: string;
  description: string;
  prefix: string;
  members: readonly { agent: string; role: string }[];
  coordinator: CoordinatorConfig;
  /** The definition of `coordinator.kind` (a built-in or one registered in code). */
  coordinatorDefinition: CoordinatorDefinition;
  /** The stop conditions its coordinator may name, by name. */
  stopConditions: ReadonlyMap<string, StopConditionDefinition>;
}

/** What a team run carries from one turn to the next (journal field `team:<n>`). */
export interface TeamState {
  /** Turns taken (coordinator decisions that selected members). */
  turns: number;
  /** Per member (by index): how much of the shared chat it has been given. */
  cursors: number[];
}

export function initialTeamState(team: TeamRuntime): TeamState {
  return { turns: 0, cursors: team.members.map(() => 0) };
}

/** The coordinator's decision: members (indices, in order) to act now, or done, or a failure. */
export type Selection =
  | { kind: 'act'; members: number[] }
  | { kind: 'done' }
  | { kind: 'failed'; code: string; message: string };

/** A condition on the session's state (`state_key`, `state_equals`). */
export interface UntilCondition {
  contains?: string | undefined;
  state_key?: string | undefined;
  state_equals?: { key: string; value: unknown } | undefined;
}

/**
 * Whether a condition on the session's state holds, given the JSON text under its key (null: not set):
 * `state_key` when the key is set, `state_equals` when its value is the same JSON (key order aside).
 */
export function stateConditionHolds(until: UntilCondition, json: string | null): boolean {
  if (json === null) return false;
  if (until.state_equals === undefined) return until.state_key !== undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return false;
  }
  // A value an agent set may be built to exhaust the stack: then it is simply not the expected one.
  const stored = canonicalJson(value);
  return stored !== undefined && stored === canonicalJson(until.state_equals.value);
}

function textOf(message: Message): string {
  return message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/**
 * A member's view of what happened in the shared chat since it last acted: the new messages, without its
 * own, as user messages that keep their sender, parts and metadata.
 */
export function syncForMember(
  shared: readonly Message[],
  cursor: number,
  agent: string,
  idOf: (index: number) => string,
): Message[] {
  return shared
    .slice(cursor)
    .filter((message) => message.sender !== agent)
    .map((message, index) => ({ ...message, id: idOf(index), role: 'user' as const }));
}

/** The member answers a team run adds to its shared chat, in selection order. */
export function answerMessages(input: {
  runId: string;
  turn: number;
  answers: readonly { agent: string; text: string; runId: string }[];
  now: string;
}): Message[] {
  return input.answers.map((answer, index) => ({
    id: `${input.runId}-t${input.turn}-m${index}`,
    sender: answer.agent,
    role: 'assistant',
    parts: [{ type: 'text', text: answer.text }],
    metadata: { member_run_id: answer.runId, turn: input.turn },
    created_at: input.now,
  }));
}

/** The team's answer: the last message of the shared chat. */
export function teamResult(shared: readonly Message[]): string {
  const last = shared.at(-1);
  return last ? textOf(last) : '';
}

export { textOf as messageText };
