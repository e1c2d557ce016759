import type { BrowserPageStore } from './builtin/browser/browser-page-store.js';
import type { NoteStore } from './builtin/session-data/note-store.js';
import type { StateStore } from './builtin/session-data/state-store.js';
import type { TaskStore } from './builtin/session-data/task-store.js';
import type { WaitStore } from './builtin/waits/wait-store.js';

/**
 * The data a session's agents share through their toolboxes, handed to a tool call as `context.session.data`:
 * the ports of the state, tasks, notes, browser and waits toolboxes, each declared beside the toolbox that calls it.
 * src/redis implements each beside the Lua scripts it runs, under the session's hash tag.
 */
export interface SessionDataStore extends StateStore, TaskStore, NoteStore, BrowserPageStore, WaitStore {}
