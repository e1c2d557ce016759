import type { Message } from '../chat/index.js';
import type { RatchetEvent } from '../events/event.js';
import { followEvents as followSessionEvents } from '../redis/event-follower.js';
import { mainChatId } from '../redis/keys.js';
import { redisMemory } from '../redis/memory-store.js';
import { createSession as createStoredSession, getSession } from '../redis/session-store.js';
import { defaultTenant } from '../schemas/index.js';
import { type MemoryNote, readMemory } from '../tools/builtin/memory/memory-notes.js';
import type { TaskRecord } from '../tools/builtin/session-data/task-record.js';
import { type SessionView, sessionIdOfRun } from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';
import { assertAgent, checkMetadata } from './run-limits.js';
import {
  readSessionNotes,
  readSessionState,
  readSessionTasks,
  type SessionNote,
} from './session-data-view.js';

/** Sessions and what they hold, as the client face reads them: chats, events, state, tasks, notes, memory. */

export async function createSession(
  parts: EngineParts,
  input: { agent?: string; metadata?: Record<string, unknown>; tenant?: string },
): Promise<SessionView> {
  const agent = input.agent ?? parts.options.defaultAgent;
  assertAgent(parts.options, agent);
  checkMetadata(parts.options, input.metadata);
  return createStoredSession(parts.context, {
    agent,
    tenant: input.tenant ?? defaultTenant,
    ...(input.metadata ? { metadata: input.metadata } : {}),
  });
}

/** The state blackboard of a session (key -> value); undefined when there is no such session. */
export async function sessionState(
  parts: EngineParts,
  sessionId: string,
): Promise<Record<string, unknown> | undefined> {
  return (await getSession(parts.context, sessionId)) && readSessionState(parts.store.sessionData(sessionId));
}

/** The task board of a session; undefined when there is no such session. */
export async function sessionTasks(parts: EngineParts, sessionId: string): Promise<TaskRecord[] | undefined> {
  return (await getSession(parts.context, sessionId)) && readSessionTasks(parts.store.sessionData(sessionId));
}

/** The notes of a session (shared ones and each agent's); undefined when there is no such session. */
export async function sessionNotes(
  parts: EngineParts,
  sessionId: string,
): Promise<SessionNote[] | undefined> {
  return (await getSession(parts.context, sessionId)) && readSessionNotes(parts.store.sessionData(sessionId));
}

/**
 * What an agent remembers across sessions (the `memory` toolbox): its own notes, then the deployment's,
 * without those past their expiry.
 */
export async function agentMemory(parts: EngineParts, agent: string): Promise<MemoryNote[]> {
  return readMemory(redisMemory(parts.redis, parts.space), agent, parts.now());
}

/**
 * Every event after `after`, then each new one, until the signal aborts. Throws `too_many_followers` at
 * once (not on the first read) when this process serves `maxFollowers` already.
 */
export function followEvents(
  parts: EngineParts,
  sessionId: string,
  options: { after?: string; signal: AbortSignal },
): AsyncGenerator<RatchetEvent> {
  return followSessionEvents(parts.eventHub, parts.redis, parts.space, sessionId, options);
}

export async function readChat(
  parts: EngineParts,
  sessionId: string,
  options: { chatId?: string; from?: number },
): Promise<Message[]> {
  return parts.store.readChat(sessionId, options.chatId ?? mainChatId, options.from ?? 0);
}

/**
 * The chat a run works on, from index `from` (GET /v1/runs/:id/messages): a child run's or team member's
 * own chat, a root run's session chat. Undefined when the run does not exist.
 */
export async function runChat(
  parts: EngineParts,
  runId: string,
  from: number,
): Promise<{ chatId: string; messages: Message[] } | undefined> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) return undefined;
  const stored = await parts.store.loadRun(sessionId, runId);
  if (!stored) return undefined;
  const chatId = stored.record.chat_id;
  return { chatId, messages: await parts.store.readChat(sessionId, chatId, from) };
}
