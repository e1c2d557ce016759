/**
 * `ratchet/client`: a typed client of Ratchet's HTTP API for Node and browsers (fetch, no Node built-ins).
 * docs/client.md describes it.
 */
export type { EventKind } from '../events/event.js';
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
  type WaitOptions,
} from './ratchet-client.js';
export type {
  AcceptedRun,
  AgentMemory,
  AgentSummary,
  AnswerAccepted,
  ApprovalAnswer,
  ChatMessage,
  ForkRunInput,
  Health,
  Inbox,
  InboxQuestion,
  IterationStep,
  MemoryNote,
  Question,
  QuestionResponse,
  RatchetClientEvent,
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
  WireErrorCode,
} from './wire-schemas.js';
