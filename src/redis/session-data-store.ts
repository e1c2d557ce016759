import type { BrowserPageStore, NoteStore, SessionDataStore, StateStore, TaskStore } from '../tools/index.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, type SessionDataKeys, sessionDataKeys } from './keys.js';
import { runScript } from './scripts.js';
import { redisWaits } from './wait-store.js';

/**
 * The data a session's agents share through their toolboxes (state, tasks, notes, the browser's pages), as
 * Redis keeps it: each toolbox's port implemented beside the Lua scripts it runs, all under the session's
 * hash tag (so each script touches one slot). Values travel as the JSON text the toolboxes wrote; the
 * toolboxes parse and check them.
 */
export function redisSessionData(redis: RedisClient, space: KeySpace, sessionId: string): SessionDataStore {
  const keys = sessionDataKeys(space, sessionId);
  return {
    ...redisState(redis, keys),
    ...redisTasks(redis, keys),
    ...redisNotes(redis, keys),
    ...redisBrowserPages(redis, keys),
    ...redisWaits(redis, space, sessionId),
  };
}

/** The `state` toolbox's port (state-set.lua, state-watch.lua, state-delete.lua). */
function redisState(redis: RedisClient, keys: SessionDataKeys): StateStore {
  return {
    readState: (key) => redis.hget(keys.state, key),
    stateKeys: () => redis.hkeys(keys.state),
    hasState: async (key) => (await redis.hexists(keys.state, key)) === 1,
    async setState(key, json, maxKeys) {
      const [code, detail] = await runScript(
        redis,
        'state-set',
        [keys.state, keys.stateWatchers],
        [key, json, maxKeys],
      );
      return code === 'FULL'
        ? { kind: 'full', keys: Number(detail) }
        : { kind: 'set', watchers: detail ?? '[]' };
    },
    async deleteState(deletion) {
      const [, removed] = await runScript(
        redis,
        'state-delete',
        [keys.state, keys.stateDeletes],
        [deletion.key, deletion.callKey, deletion.keptAnswers],
      );
      return removed === '1';
    },
    async watchState(watch) {
      const [code, detail] = await runScript(
        redis,
        'state-watch',
        [keys.state, keys.stateWatchers, keys.stateWatchDeadlines],
        [watch.key, watch.jobId, watch.callKey, Math.ceil(watch.deadlineMs), watch.nowMs],
      );
      if (code === 'FOUND') return { kind: 'found', json: detail ?? '' };
      if (code === 'TIMED_OUT') return { kind: 'timed_out' };
      return { kind: 'waiting', deadlineMs: Number(detail) };
    },
  };
}

/** The `tasks` toolbox's port (task-create.lua, task-claim.lua, task-update.lua). */
function redisTasks(redis: RedisClient, keys: SessionDataKeys): TaskStore {
  return {
    async createTask(callKey, draftJson, maxTasks) {
      const [code, id, json] = await runScript(
        redis,
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
      const [code, json] = await runScript(
        redis,
        'task-claim',
        [keys.tasks],
        [claim.id, claim.callKey, claim.actorJson, claim.now],
      );
      if (code === 'NOT_FOUND') return { kind: 'not_found' };
      const kind = code === 'TAKEN' ? 'taken' : code === 'NOT_PENDING' ? 'not_pending' : 'claimed';
      return { kind, json: json ?? '' };
    },
    async updateTask(update) {
      const [code, json] = await runScript(
        redis,
        'task-update',
        [keys.tasks],
        [update.id, update.status, update.note, update.actorJson, update.runId, update.callKey, update.now],
      );
      if (code === 'NOT_FOUND') return { kind: 'not_found' };
      const kind = code === 'NOT_YOURS' ? 'not_yours' : code === 'NOT_CLAIMED' ? 'not_claimed' : 'updated';
      return { kind, json: json ?? '' };
    },
  };
}

/** The `notes` toolbox's port (note-write.lua). */
function redisNotes(redis: RedisClient, keys: SessionDataKeys): NoteStore {
  return {
    async writeNote(field, json, maxNotes) {
      const [code, count] = await runScript(redis, 'note-write', [keys.notes], [field, json, maxNotes]);
      return code === 'FULL' ? { kind: 'full', notes: Number(count) } : { kind: 'written' };
    },
    readNote: (field) => redis.hget(keys.notes, field),
    noteFields: () => redis.hkeys(keys.notes),
  };
}

/** The browser toolbox's port: each run's page record in one hash of the session. */
function redisBrowserPages(redis: RedisClient, keys: SessionDataKeys): BrowserPageStore {
  return {
    readBrowserPage: (runId) => redis.hget(keys.browser, runId),
    async writeBrowserPage(runId, json) {
      await redis.hset(keys.browser, runId, json);
    },
  };
}
