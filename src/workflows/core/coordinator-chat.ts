import type { Message } from '../../chat/index.js';
import { messageText } from './team.js';

/** The longest `reason` of a coordinator's decision kept in its chat, in characters; a longer one is cut. */
export const maxCoordinatorReasonChars = 1_000;

/** A recorded decision of the `llm` coordinator, its members by name. */
export interface CoordinatorDecision {
  readonly members: readonly string[];
  readonly done: boolean;
  readonly reason?: string | undefined;
}

/**
 * The turn before whose decision each shared message was added: the run's input before turn 1, a member's
 * answer of turn k (metadata `turn`) before turn k + 1. Never decreasing and never past `turn`, whatever
 * metadata a message carries.
 */
function decisionTurns(shared: readonly Message[], turn: number): number[] {
  let current = 1;
  return shared.map((message) => {
    const answered = message.metadata.turn;
    if (typeof answered === 'number' && Number.isInteger(answered)) {
      current = Math.min(turn, Math.max(current, answered + 1));
    }
    return current;
  });
}

/**
 * The `llm` coordinator's own chat at turn `turn`, what its request holds after the system prompt: for each
 * turn whose new shared messages fall within the window (the latest `window` messages of the shared chat), a
 * user message with those messages, then what the coordinator decided at that turn and why. Built only from
 * the shared chat and the recorded decisions, so a turn that runs again sends the same request.
 */
export function coordinatorChat(input: {
  shared: readonly Message[];
  /** Decisions of earlier turns by turn number, as recorded (`team-select:<n>`). */
  decisions: ReadonlyMap<number, CoordinatorDecision>;
  turn: number;
  window: number;
  /** The coordinator's name: the sender of its decisions. */
  coordinator: string;
  /** A deterministic id for a message of this request. */
  idOf(suffix: string): string;
  createdAt: string;
}): Message[] {
  const { shared, turn } = input;
  const turns = decisionTurns(shared, turn);
  const first = Math.max(0, shared.length - input.window);
  const groups = new Map<number, Message[]>();
  for (let index = first; index < shared.length; index += 1) {
    const message = shared[index];
    const at = turns[index] ?? turn;
    if (message) groups.set(at, [...(groups.get(at) ?? []), message]);
  }
  if (!groups.has(turn)) groups.set(turn, []);
  const message = (suffix: string, role: 'user' | 'assistant', text: string): Message => ({
    id: input.idOf(suffix),
    sender: role === 'assistant' ? input.coordinator : 'user',
    role,
    parts: [{ type: 'text', text }],
    metadata: {},
    created_at: input.createdAt,
  });
  const chat: Message[] = [];
  for (const [at, messages] of groups) {
    const lines = messages.map((shown) => `[${shown.sender}] ${messageText(shown)}`);
    const left =
      chat.length === 0 && first > 0 ? [`(${first} earlier messages of the conversation are not shown)`] : [];
    const text = [...left, ...lines].join('\n\n');
    chat.push(message(`coord-h${at}`, 'user', text === '' ? '(nothing new)' : text));
    const decision = at < turn ? input.decisions.get(at) : undefined;
    if (decision) chat.push(message(`coord-d${at}`, 'assistant', decisionText(decision)));
  }
  return chat;
}

/** A decision as the coordinator sees its own earlier answers: the JSON it is asked for. */
export function decisionText(decision: CoordinatorDecision): string {
  return JSON.stringify({
    members: decision.members,
    done: decision.done,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
}
