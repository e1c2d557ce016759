import type { RedisClient } from './connection.js';
import { type KeySpace, sessionDataKeys } from './keys.js';
import { runScript, type ScriptName } from './scripts.js';

/**
 * The data a session's agents share through their toolboxes (state, tasks, notes), as Redis keeps it: every
 * read and write of those toolboxes goes through here, beside the Lua scripts it runs. Values travel as the
 * JSON text the toolboxes wrote; the toolboxes parse and check them.
 */
export interface SessionDataStore {
  /** The JSON text under a state key, or null. */
  readState(key: string): Promise<string | null>;
  stateKeys(): Promise<string[]>;
  hasState(key: string): Promise<boolean>;
  /** Sets a key unless the state is full; the watchers it woke come back as JSON text (state-set.lua). */
  setState(
    key: string,
    json: string,
    maxKeys: number,
  ): Promise<{ kind: 'set'; watchers: string } | { kind: 'full'; keys: number }>;
  /**
   * Looks at a key for a watching call (state-watch.lua): its value when set, a timeout past the deadline, or
   * the watch is recorded and the call waits until `deadline`.
   */
  watchState(watch: {
    key: string;
    jobId: string;
    callKey: string;
    deadlineMs: number;
    nowMs: number;
  }): Promise<
    { kind: 'found'; json: string } | { kind: 'timed_out' } | { kind: 'waiting'; deadlineMs: number }
  >;
  /** Creates a task once per call key (task-create.lua); the stored task's JSON comes back. */
  createTask(
    callKey: string,
    draftJson: string,
    maxTasks: number,
  ): Promise<{ kind: 'created'; id: string; json: string } | { kind: 'full'; tasks: number }>;
  /** Every task's JSON text, by id. */
  allTasks(): Promise<Record<string, string>>;
  /** Claims a pending task (task-claim.lua); the task's JSON comes back whatever the outcome. */
  claimTask(claim: {
    id: string;
    callKey: string;
    actorJson: string;
    now: string;
  }): Promise<{ kind: 'claimed' | 'taken' | 'not_pending'; json: string } | { kind: 'not_found' }>;
  /** Sets a task's status (task-update.lua); the task's JSON comes back whatever the outcome. */
  updateTask(update: {
    id: string;
    status: string;
    note: string;
    actorJson: string;
    runId: string;
    callKey: string;
    now: string;
  }): Promise<{ kind: 'updated' | 'not_yours' | 'not_claimed'; json: string } | { kind: 'not_found' }>;
  /** Writes a note unless the session is full of them (note-write.lua). */
  writeNote(
    field: string,
    json: string,
    maxNotes: number,
  ): Promise<{ kind: 'written' } | { kind: 'full'; notes: number }>;
  readNote(field: string): Promise<string | null>;
  noteFields(): Promise<string[]>;
  /** The JSON text of the page a run's browser shows (the browser toolbox's record), or null. */
  readBrowserPage(runId: string): Promise<string | null>;
  writeBrowserPage(runId: string, json: string): Promise<void>;
}

/** The session data of one session in Redis (under the session's hash tag, so each script touches one slot). */
export function redisSessionData(redis: RedisClient, space: KeySpace, sessionId: string): SessionDataStore {
  const keys = sessionDataKeys(space, sessionId);
  const script = (name: ScriptName, scriptKeys: string[], args: (string | number)[]) =>
    runScript(redis, name, scriptKeys, args);
  return {
    readState: (key) => redis.hget(keys.state, key),
    stateKeys: () => redis.hkeys(keys.state),
    hasState: async (key) => (await redis.hexists(keys.state, key)) === 1,
    async setState(key, json, maxKeys) {
      const [code, detail] = await script(
        'state-set',
        [keys.state, keys.stateWatchers],
        [key, json, maxKeys],
      );
      return code === 'FULL'
        ? { kind: 'full', keys: Number(detail) }
        : { kind: 'set', watchers: detail ?? '[]' };
    },
    async watchState(watch) {
      const [code, detail] = await script(
        'state-watch',
        [keys.state, keys.stateWatchers, keys.stateWatchDeadlines],
        [watch.key, watch.jobId, watch.callKey, Math.ceil(watch.deadlineMs), watch.nowMs],
      );
      if (code === 'FOUND') return { kind: 'found', json: detail ?? '' };
      if (code === 'TIMED_OUT') return { kind: 'timed_out' };
      return { kind: 'waiting', deadlineMs: Number(detail) };
    },
    async createTask(callKey, draftJson, maxTasks) {
      const [code, id, json] = await script(
        'task-create',
        [keys.tasks, keys.taskIndex],
        [callKey, draftJson, maxTasks],
      );
      return code === 'FULL'
        ? { kind: 'full', tasks: Number(id) }
        : { kind: 'created', id: id ?? '', json: json ?? '' };
    },
    allTasks: () => redis.hgetall(keys.tasks),
    async claimTask(claim) {
      const [code, json] = await script(
        'task-claim',
        [keys.tasks],
        [claim.id, claim.callKey, claim.actorJson, claim.now],
      );
      if (code === 'NOT_FOUND') return { kind: 'not_found' };
      const kind = code === 'TAKEN' ? 'taken' : code === 'NOT_PENDING' ? 'not_pending' : 'claimed';
      return { kind, json: json ?? '' };
    },
    async updateTask(update) {
      const [code, json] = await script(
        'task-update',
        [keys.tasks],
        [update.id, update.status, update.note, update.actorJson, update.runId, update.callKey, update.now],
      );
      if (code === 'NOT_FOUND') return { kind: 'not_found' };
      const kind = code === 'NOT_YOURS' ? 'not_yours' : code === 'NOT_CLAIMED' ? 'not_claimed' : 'updated';
      return { kind, json: json ?? '' };
    },
    async writeNote(field, json, maxNotes) {
      const [code, count] = await script('note-write', [keys.notes], [field, json, maxNotes]);
      return code === 'FULL' ? { kind: 'full', notes: Number(count) } : { kind: 'written' };
    },
    readNote: (field) => redis.hget(keys.notes, field),
    noteFields: () => redis.hkeys(keys.notes),
    readBrowserPage: (runId) => redis.hget(keys.browser, runId),
    async writeBrowserPage(runId, json) {
      await redis.hset(keys.browser, runId, json);
    },
  };
}
