export { answersWithin } from './answers-within.js';
export type { ApiEngine } from './api-engine.js';
export { ApiError, toApiError, unavailableRetryAfterSeconds } from './api-error.js';
export { type Caller, currentCaller, runAsCaller } from './caller-scope.js';
export { type ApiServerOptions, createApiServer } from './create-api-server.js';
export { type AgentSummary, listAgents, runnableSummaries } from './routes/agent-routes.js';
export { listPendingQuestions } from './routes/inbox-routes.js';
export { listRunsPage, listSessionsPage, runSummary } from './run-index-requests.js';
export { requireRunSteps, requireRunTree } from './run-inspection-requests.js';
export {
  cancelRun,
  forkRun,
  type RunWait,
  requireRun,
  respondToQuestion,
  retryRun,
  submitRun,
  waitForRun,
} from './run-requests.js';
export { sessionNotesOf, sessionStateOf, sessionTasksOf } from './session-data-reads.js';
export { maxCountedRuns, tenantScopedEngine } from './tenant-scoped-engine.js';
