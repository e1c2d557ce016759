import type { Engine } from '../workflows/index.js';

/** What the API asks of the engine: it records, enqueues and reads; workers do the work. */
export type ApiEngine = Pick<
  Engine,
  | 'startRun'
  | 'getRun'
  | 'waitForRun'
  | 'cancelRun'
  | 'retryRun'
  | 'forkRun'
  | 'createSession'
  | 'getSession'
  | 'deleteSession'
  | 'listQuestions'
  | 'respond'
  | 'readChat'
  | 'readEvents'
  | 'followEvents'
  | 'lastEventId'
  | 'agentUsage'
  | 'sessionState'
  | 'sessionTasks'
  | 'sessionNotes'
  | 'listRuns'
  | 'countRuns'
  | 'listSessions'
  | 'runTree'
  | 'runSteps'
  | 'systemState'
  | 'inbox'
  | 'stepQueues'
  | 'runChat'
>;
