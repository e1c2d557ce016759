import { type Message, type Part, toolCallsOf } from '../../../chat/index.js';
import type { EffectParams } from '../../../config/index.js';
import { clipText } from './clip-text.js';
import { hiddenReplies, isPinned } from './context-view.js';

/**
 * The shrinking effects that change messages in place of sending them whole. Each takes the messages about
 * to be sent and returns new ones; the chat is never changed. They keep every tool result with the call it
 * answers (a provider refuses one without the other) and never touch pinned messages (system, summary).
 */

/** The positions of the tool-result parts in `messages`, oldest first. */
function toolResultPositions(messages: readonly Message[]): { message: number; part: number }[] {
  const positions: { message: number; part: number }[] = [];
  messages.forEach((message, messageIndex) => {
    if (isPinned(message)) return;
    message.parts.forEach((part, partIndex) => {
      if (part.type === 'tool_result') positions.push({ message: messageIndex, part: partIndex });
    });
  });
  return positions;
}

/**
 * `messages` with the tool results older than the newest `keep` replaced by `replace(part, message)`, without
 * their images.
 */
function rewriteOlderToolResults(
  messages: readonly Message[],
  keep: number,
  replace: (content: string, toolName: string) => string,
): Message[] {
  const positions = toolResultPositions(messages);
  const older = positions.slice(0, Math.max(0, positions.length - keep));
  if (older.length === 0) return [...messages];
  const names = toolNamesById(messages);
  const result = [...messages];
  for (const { message: messageIndex, part: partIndex } of older) {
    const message = result[messageIndex] as Message;
    const part = message.parts[partIndex];
    if (part?.type !== 'tool_result') continue;
    const content = replace(part.content, names.get(part.tool_call_id) ?? message.sender);
    // An older result's images (screenshots) go too: each would be sent again with every request.
    const images = part.images?.length ?? 0;
    if (content === part.content && images === 0) continue;
    const { images: _dropped, ...kept } = part;
    const parts: Part[] = [...message.parts];
    parts[partIndex] = {
      ...kept,
      content: images === 0 ? content : `${content}\n[${images} image(s) left out to save context]`,
    };
    result[messageIndex] = { ...message, parts };
  }
  return result;
}

function toolNamesById(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) for (const call of toolCallsOf(message)) names.set(call.id, call.name);
  return names;
}

/** trim_tool_results: every tool result but the newest `preserve_recent` is cut to max_result_length. */
export function trimToolResults(
  messages: readonly Message[],
  params: EffectParams<'trim_tool_results'>,
): Message[] {
  return rewriteOlderToolResults(messages, params.preserve_recent, (content) =>
    clipText(content, params.max_result_length, 'tool result'),
  );
}

/** observation_mask: every tool result but the newest `recent_window` is replaced by a short note. */
export function maskObservations(
  messages: readonly Message[],
  params: EffectParams<'observation_mask'>,
): Message[] {
  return rewriteOlderToolResults(messages, params.recent_window, (content, toolName) => {
    const note = `[result of ${toolName} hidden to save context: ${content.length} characters]`;
    return content.length > note.length ? note : content;
  });
}

/**
 * sliding_window: the newest `recent_zone` messages whole, the `medium_zone` before them with their text and
 * tool results cut to trim_length, and the older ones left out (with a note saying how many), except the
 * last message a person wrote, which says what the task is. Zone borders move back so that no zone starts
 * with tool results whose call is in the zone before.
 */
export function slideWindow(messages: readonly Message[], params: EffectParams<'sliding_window'>): Message[] {
  const pinnedHead: Message[] = [];
  let start = 0;
  while (start < messages.length && isPinned(messages[start] as Message)) {
    pinnedHead.push(messages[start] as Message);
    start += 1;
  }
  const body = messages.slice(start);
  const recentStart = safeBorder(body, body.length - params.recent_zone);
  const mediumStart = safeBorder(body, recentStart - params.medium_zone);
  const medium = body
    .slice(mediumStart, recentStart)
    .map((message) => (isPinned(message) ? message : clipMessage(message, params.trim_length)));
  const old = body.slice(0, mediumStart);
  if (old.length === 0) return [...pinnedHead, ...medium, ...body.slice(recentStart)];

  const task = lastWrittenByPerson(old);
  const left = old.length - (task === undefined ? 0 : 1);
  const first = old[0] as Message;
  const note: Message = {
    id: `${first.id}-omitted`,
    sender: 'ratchet',
    role: 'user',
    parts: [
      {
        type: 'text',
        text: `[${left} earlier messages are not shown, to keep the request within the context window]`,
      },
    ],
    // How many of the model's own replies the note stands for: a reader counting replies (the scripted
    // model, a client) can still tell how far the conversation went.
    metadata: { context: 'window_note', hidden_replies: hiddenReplies(old) },
    created_at: first.created_at,
  };
  const kept = old.filter((message) => isPinned(message) || message === task);
  return [...pinnedHead, note, ...kept, ...medium, ...body.slice(recentStart)];
}

/** The nearest index at or before `index` (at least 0) where a zone may start: not at a tool result. */
function safeBorder(body: readonly Message[], index: number): number {
  let border = Math.max(0, index);
  while (border > 0 && body[border]?.role === 'tool') border -= 1;
  return border;
}

function lastWrittenByPerson(messages: readonly Message[]): Message | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    if (message.role === 'user' && message.metadata.effect === undefined && !isPinned(message))
      return message;
  }
  return undefined;
}

/** Text and tool results cut to `limit`; tool call arguments stay whole (providers parse them). */
function clipMessage(message: Message, limit: number): Message {
  let changed = false;
  const parts = message.parts.map((part): Part => {
    if (part.type === 'text') {
      const text = clipText(part.text, limit, 'message');
      if (text === part.text) return part;
      changed = true;
      return { ...part, text };
    }
    if (part.type === 'tool_result') {
      const content = clipText(part.content, limit, 'tool result');
      if (content === part.content) return part;
      changed = true;
      return { ...part, content };
    }
    return part;
  });
  return changed ? { ...message, parts } : message;
}
