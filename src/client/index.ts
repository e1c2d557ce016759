/**
 * `ratchet/client`: a typed client of Ratchet's HTTP API for Node and browsers (fetch, no Node built-ins).
 * docs/client.md describes it.
 */

export type {
  AcceptedRun,
  AgentDetail,
  AgentMemory,
  AgentSummary,
  AnswerAccepted,
  ApprovalAnswer,
  ChatMessage,
  CreateScheduleBody,
  EventKind,
  ForkRunInput,
  Health,
  Inbox,
  InboxQuestion,
  IterationStep,
  MemoryNote,
  Question,
  QuestionResponse,
  RememberedApprovalView,
  RetryRunInput,
  Run,
  RunListFilters,
  RunListItem,
  RunListStatus,
  RunMessages,
  RunPage,
  RunStatus,
  RunSteps,
  RunSummary,
  RunTree,
  RunTreeNode,
  ScheduleFire,
  ScheduleView,
  Session,
  SessionListFilters,
  SessionListItem,
  SessionNote,
  SessionPage,
  SessionTask,
  StepsQuery,
  SubmitRunInput,
  SystemState,
  UsageTotals,
  WebhookDelivery,
  WebhookDeliveryList,
  WireErrorCode,
  /** One event as the SSE route sends it in a frame's `data`, typed by kind. */
  WireEvent as RatchetClientEvent,
} from '../wire/index.js';
export { runListStatuses } from '../wire/index.js';
export {
  RatchetApiError,
  type RatchetErrorEnvelope,
  RatchetResponseError,
} from './client-errors.js';
export type { EventsOptions } from './event-stream.js';
export {
  type ApprovalDecision,
  RatchetClient,
  type RatchetClientOptions,
  type RequestOptions,
  type SubmitOptions,
  type WaitOptions,
} from './ratchet-client.js';
