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
  AgentSummary,
  AnswerAccepted,
  ApprovalAnswer,
  Health,
  Question,
  QuestionResponse,
  RatchetClientEvent,
  Run,
  RunStatus,
  Session,
  SessionNote,
  SessionTask,
  SubmitRunInput,
  UsageTotals,
  WireErrorCode,
} from './wire-schemas.js';
