// The durable engine's public face. The client face (src/engine) starts, reads, answers and cancels runs with
// the records, views and pure plans below; the worker runs `stepKinds` with their context and the retry
// policy. Everything else in src/workflows is the engine's own.

export {
  type AgentDefinition,
  agentDefinitionSchema,
  agentEntryOf,
  changedFields,
  definitionsOf,
  delegateDefaultOf,
  expandRecorded,
  type HashedDefinition,
  type ProviderDefinition,
} from './agent-definition.js';
export { canonicalJson } from './core/canonical-json.js';
export { type ContractCheck, compileContracts } from './core/contracts.js';
export { builtinCoordinatorDefinitions, type TeamKinds, teamKinds } from './core/coordinators.js';
export { builtinEffects, effectRegistry, resolveEffects } from './core/effects/index.js';
export { createOutputCheck } from './core/guardrails.js';
export {
  builtinMiddleware,
  type OutputSchemaCheck,
  outputGuardrailMiddleware,
  outputSchemaMiddleware,
} from './core/middleware/index.js';
export { resultMetadataOf } from './core/result-metadata.js';
export { backoffDelay, decideRetry, type RetrySettings } from './core/retry-policy.js';
export { cancelCommit } from './core/run-commits.js';
export {
  type ContinuationLimits,
  forkLength,
  planFork,
  planRetry,
  recorderOf,
  retryRefusal,
} from './core/run-continuation.js';
export { type DefinitionToRecord, planRunCreation, runDeadline } from './core/run-creation.js';
export { runDurationMs } from './core/run-duration.js';
export type {
  AttemptView,
  IterationView,
  RunTimeline,
  RunTreeNode,
  ToolCallView,
  WaitView,
} from './core/run-timeline.js';
export { decideFire, type FireSituation } from './core/schedule-fire.js';
export { shownStatus } from './core/shown-status.js';
export {
  type Capabilities,
  type CapabilityKind,
  capabilityKinds,
  capabilityLimits,
  capabilityProblems,
  contractNeeds,
  mergeNeeds,
  missingNeeds,
  type Needs,
  type NeedsDefinition,
  needsOf,
  normalizedCapabilities,
  servesAll,
} from './core/step-needs.js';
export { goalsProgress, type SupervisorLimits, supervisorInstructions } from './core/supervisor.js';
export { type CrashPointName, crashPoint, crashPointNames } from './crash-points.js';
export type { HandoffGroup } from './handoff-toolbox.js';
export {
  isPendingMessageId,
  isSessionId,
  newPendingMessageId,
  newRunId,
  newSessionId,
  runIdOfPendingMessage,
  scheduledRunIds,
  sessionIdOfRun,
  stepJobId,
  triggeredRunIds,
} from './ids.js';
export { journalField } from './journal.js';
export { type PendingMessage, pendingMessageSchema } from './pending-message.js';
export { normalizeResponse, sessionOfQuestion } from './question-answers.js';
export {
  type QuestionKind,
  type QuestionRecord,
  type QuestionResponse,
  questionKinds,
  questionRecordSchema,
  questionResponseSchema,
} from './question-record.js';
export {
  matchingApproval,
  maxRememberedApprovals,
  type RememberedApproval,
  rememberedApprovalOf,
  rememberSchema,
} from './remembered-approval-match.js';
export type {
  ListedRunStatus,
  RunCounts,
  RunFilter,
  RunPage,
  SessionFilter,
  SessionPage,
} from './run-listing.js';
export type { AnyRunOrigin, Budget, RunRecord, ScheduleOrigin, SubGoal } from './run-record.js';
export {
  budgetSchema,
  continuationOf,
  isFinished,
  runErrorSchema,
  scheduleOriginSchema,
  subGoalSchema,
} from './run-record.js';
export {
  decodeFireDecision,
  encodeFireDecision,
  type FireDecision,
  type FireSkipReason,
  type ScheduleRecord,
  scheduleRecordSchema,
} from './schedule-record.js';
export type { StepScheduler } from './step-scheduler.js';
export {
  type AdmissionCandidate,
  awaitsAdmission,
  type RunAdmission,
} from './steps/runner/run-admission.js';
export type { NextStep, StepAction } from './steps/runner/step-action.js';
export type {
  AgentRuntime,
  DefinitionRuntimes,
  PinnedDefinition,
  StepContext,
  StepServices,
  TeamService,
  TenantBudgets,
} from './steps/runner/step-context.js';
export type { StepKind } from './steps/runner/step-kind.js';
export type {
  ModelCallReport,
  ObservedRun,
  RepeatCause,
  StepObserver,
  StepReport,
  ToolCallReport,
} from './steps/runner/step-observer.js';
export { type ParkJob, runStep, type StepEnd } from './steps/runner/step-runner.js';
export type { StepStore, StepStores } from './steps/runner/step-store.js';
export { stepKinds } from './steps/step-kinds.js';
export { supervisorToolbox } from './supervisor-toolbox.js';
export {
  type ContractValidation,
  type ContractViolation,
  type ValidateAgainstContractOptions,
  validateAgainstContract,
} from './validate-against-contract.js';
export {
  type Progress,
  type QueuedReason,
  type RunView,
  type RunWait,
  type SessionView,
  type UsageTotals,
  usageTotalsOf,
} from './views.js';
