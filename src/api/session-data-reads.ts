import { RatchetError } from '../errors/index.js';
import type { TaskRecord } from '../tools/builtin/session-data/task-record.js';
import { isSessionId } from '../workflows/index.js';
import type { ApiEngine } from './api-engine.js';

/**
 * What the agents of a session wrote, read from outside (GET /v1/sessions/:id/state, /tasks, /notes and the
 * MCP tools of the same names): 404 `session_not_found` when there is no such session.
 */

export function sessionNotFound(sessionId: string): RatchetError {
  return new RatchetError('session_not_found', `unknown session ${sessionId}`);
}

function found<Value>(value: Value | undefined, sessionId: string): Value {
  if (value === undefined) throw sessionNotFound(sessionId);
  return value;
}

function checked(sessionId: string): string {
  if (!isSessionId(sessionId)) throw sessionNotFound(sessionId);
  return sessionId;
}

/** A task as clients see it: without the idempotency keys the task scripts keep. */
function toWireTask(task: TaskRecord) {
  const { v: _v, claim_key: _claim, update_key: _update, ...wire } = task;
  return wire;
}

export async function sessionStateOf(engine: ApiEngine, sessionId: string) {
  return { state: found(await engine.sessionState(checked(sessionId)), sessionId) };
}

export async function sessionTasksOf(engine: ApiEngine, sessionId: string) {
  return { tasks: found(await engine.sessionTasks(checked(sessionId)), sessionId).map(toWireTask) };
}

export async function sessionNotesOf(engine: ApiEngine, sessionId: string) {
  return { notes: found(await engine.sessionNotes(checked(sessionId)), sessionId) };
}
