import { parseJsonRecord } from '../schemas/parse.js';
import { noteRecordSchema } from '../tools/builtin/session-data/notes-toolbox.js';
import { parseTask, type TaskRecord } from '../tools/builtin/session-data/task-record.js';
import type { SessionDataStore } from '../tools/index.js';

/** What the agents of a session wrote, as a client reads it (GET /v1/sessions/:id/state, /tasks, /notes). */
export interface SessionNote {
  name: string;
  /** `session`: shared by every agent of the session; `agent`: private to `agent`. */
  scope: 'session' | 'agent';
  /** The agent an `agent` note belongs to (null for a session note). */
  agent: string | null;
  content: string;
  written_by: { agent: string; run_id: string };
  updated_at: string;
}

/** The session's state blackboard: every key and its value (JSON), keys sorted. */
export async function readSessionState(store: SessionDataStore): Promise<Record<string, unknown>> {
  const keys = (await store.stateKeys()).sort();
  const values = await Promise.all(keys.map((key) => store.readState(key)));
  const state: Record<string, unknown> = {};
  keys.forEach((key, index) => {
    const json = values[index];
    if (json !== null && json !== undefined) state[key] = JSON.parse(json) as unknown;
  });
  return state;
}

/** The session's task board, by task number. */
export async function readSessionTasks(store: SessionDataStore): Promise<TaskRecord[]> {
  const tasks = Object.entries(await store.allTasks()).map(([id, json]) => parseTask(json, `task ${id}`));
  return tasks.sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
}

/** Every note of the session (session notes and each agent's), by scope, agent and name. */
export async function readSessionNotes(store: SessionDataStore): Promise<SessionNote[]> {
  const fields = (await store.noteFields()).sort();
  const notes: SessionNote[] = [];
  for (const field of fields) {
    const json = await store.readNote(field);
    if (json === null) continue;
    const stored = parseJsonRecord(noteRecordSchema, json, `note ${field}`);
    const agentNote = /^agent:([^:]+):(.*)$/s.exec(field);
    notes.push({
      name: agentNote ? (agentNote[2] ?? '') : field.slice('session:'.length),
      scope: agentNote ? 'agent' : 'session',
      agent: agentNote ? (agentNote[1] ?? null) : null,
      content: stored.content,
      written_by: { agent: stored.agent, run_id: stored.run_id },
      updated_at: stored.updated_at,
    });
  }
  return notes;
}
