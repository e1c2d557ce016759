// The durable engine's public face. Clients (API, MCP server, CLI) start runs, read them, answer questions
// and cancel through `Engine`, with the records and views below; the worker runs `stepKinds` with their
// context and the retry policy. Everything else in src/workflows is the engine's own.

export { finalFailureHeadroom } from '../redis/step-queues.js';
export { redisStepStores, type StepStore, type StepStores } from '../redis/step-store.js';
export { type ContractCheck, compileContracts } from './core/contracts.js';
export { builtinCoordinatorDefinitions, type TeamKinds, teamKinds } from './core/coordinators.js';
export { effectRegistry, resolveEffects } from './core/effects/index.js';
export { createOutputCheck } from './core/guardrails.js';
export {
  builtinMiddleware,
  type OutputSchemaCheck,
  outputGuardrailMiddleware,
  outputSchemaMiddleware,
} from './core/middleware/index.js';
export { resultMetadataOf } from './core/result-metadata.js';
export { backoffDelay, decideRetry, type RetrySettings } from './core/retry-policy.js';
export { runDurationMs } from './core/run-duration.js';
export type {
  AttemptView,
  IterationView,
  RunTimeline,
  RunTreeNode,
  ToolCallView,
  WaitView,
} from './core/run-timeline.js';
export { type SupervisorLimits, supervisorInstructions } from './core/supervisor.js';
export { type CrashPointName, crashPointNames } from './crash-points.js';
export { Engine, type SystemState } from './engine.js';
export { engineFromConfig, iterationLimit } from './engine-from-config.js';
export type { HandoffGroup } from './handoff-toolbox.js';
export { isSessionId, sessionIdOfRun } from './ids.js';
export { journalField } from './journal.js';
export { sessionOfQuestion } from './question-answers.js';
export {
  type QuestionKind,
  type QuestionRecord,
  type QuestionResponse,
  questionKinds,
  questionRecordSchema,
  questionResponseSchema,
} from './question-record.js';
export type { ListedRunStatus, RunFilter, SessionFilter } from './run-listing.js';
export type { RunRecord } from './run-record.js';
export { budgetSchema, isFinished, runErrorSchema, subGoalSchema } from './run-record.js';
export type { StepAction } from './steps/step-action.js';
export type { AgentRuntime, StepContext, StepServices, TeamService } from './steps/step-context.js';
export type { StepKind } from './steps/step-kind.js';
export { stepKinds } from './steps/step-kinds.js';
export type {
  ModelCallReport,
  ObservedRun,
  RepeatCause,
  StepObserver,
  StepReport,
  ToolCallReport,
} from './steps/step-observer.js';
export { type ParkJob, runStep, type StepEnd } from './steps/step-runner.js';
export { supervisorToolbox } from './supervisor-toolbox.js';
export type { RunView, SessionView } from './views.js';
