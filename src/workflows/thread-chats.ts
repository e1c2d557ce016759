import { createHash } from 'node:crypto';

const threadPrefix = 'thread-';

/**
 * The chat of a delegation thread: the same for every delegation to `agent` with thread `thread` in one
 * session, so each continues the conversation the earlier ones had (decision 0005). Hashed: agent and thread
 * names are free text, a chat id goes into key names.
 */
export function threadChatId(agent: string, thread: string): string {
  const digest = createHash('sha256').update(`${agent}\u0000${thread}`).digest('hex');
  return `${threadPrefix}${digest.slice(0, 24)}`;
}

/** Whether a run's chat is a thread's, which outlives the run (it goes with the session). */
export function isThreadChatId(chatId: string): boolean {
  return chatId.startsWith(threadPrefix);
}
