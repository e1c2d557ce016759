/**
 * The wire contract: every request and response body, event and error that crosses the HTTP API, by
 * resource, as zod schemas and the types inferred from them. The API validates and documents with them
 * (OpenAPI), the typed client (and through it the console) reads with them, the MCP server takes its tools'
 * arguments and answers from them. It loads nothing but zod and the chat, event and record schemas, so a
 * browser can load it too.
 */
export {
  type AgentDetail,
  type AgentMemory,
  type AgentSummary,
  agentDetailSchema,
  agentListSchema,
  agentMemorySchema,
  agentParamsSchema,
  type MemoryNote,
} from './agents.js';
export { type ErrorBody, errorBodySchema, type WireErrorCode, wireErrorCodes } from './errors.js';
export {
  type EventKind,
  eventsQuerySchema,
  isEventKind,
  streamIdSchema,
  type WireEvent,
  wireEventSchema,
} from './events.js';
export {
  type SendEventBody,
  type SendEventInput,
  type SentEvent,
  type SentSignal,
  type SignalRunBody,
  type SignalRunInput,
  sendEventBodySchema,
  sentEventSchema,
  sentSignalSchema,
  signalRunBodySchema,
  triggeredRunSchema,
} from './external-events.js';
export {
  type IterationStep,
  type RunSteps,
  type RunTree,
  type RunTreeNode,
  runStepsSchema,
  runTreeSchema,
  type StepsQuery,
  stepsQuerySchema,
} from './inspection.js';
export { decodeCursor, encodeCursor, type ListKind } from './list-cursor.js';
export {
  maxListLimit,
  type RunListFilters,
  type RunListItem,
  type RunListStatus,
  type RunPage,
  type RunSummary,
  runListInputSchema,
  runListItemSchema,
  runListQuerySchema,
  runListSchema,
  runListStatuses,
  runSummaryQuerySchema,
  runSummarySchema,
  type SessionListFilters,
  type SessionListItem,
  type SessionPage,
  sessionListInputSchema,
  sessionListQuerySchema,
  sessionListSchema,
} from './lists.js';
export {
  type ChatMessage,
  maxMessagesLimit,
  maxSenderChars,
  messageListSchema,
  messagesQuerySchema,
  type QueuedMessage,
  queuedMessageParamsSchema,
  queuedMessageSchema,
  type RunMessages,
  runMessageListSchema,
  type SendMessageInput,
  type SentMessageReply,
  type SessionMessagesQuery,
  sendMessageBodySchema,
  sentMessageSchema,
  sessionMessagesQuerySchema,
} from './messages.js';
export {
  type AnswerAccepted,
  type ApprovalAnswer,
  approvalParamsSchema,
  type Inbox,
  type InboxQuestion,
  inboxQuerySchema,
  inboxSchema,
  maxInboxLimit,
  type Question,
  type QuestionResponse,
  questionListSchema,
  questionSchema,
  type RememberedApprovalView,
  rememberedApprovalListSchema,
  rememberedApprovalSchema,
  respondAcceptedSchema,
  respondBodySchema,
} from './questions.js';
export {
  type AcceptedRun,
  acceptedRunSchema,
  cancelRunBodySchema,
  createRunBodySchema,
  type ForkRunInput,
  forkRunBodySchema,
  maxWaitSeconds,
  type RetryRunInput,
  type Run,
  type RunStatus,
  retryRunBodySchema,
  runParamsSchema,
  runSchema,
  type SubmitRunInput,
  waitQuerySchema,
} from './runs.js';
export {
  type CreateScheduleBody,
  createScheduleBodySchema,
  type ScheduleFire,
  type ScheduleList,
  type ScheduleView,
  scheduleListSchema,
  scheduleParamsSchema,
  scheduleViewSchema,
} from './schedules.js';
export {
  createSessionBodySchema,
  type Session,
  type SessionNote,
  type SessionTask,
  sessionNoteListSchema,
  sessionParamsSchema,
  sessionSchema,
  sessionStateSchema,
  sessionTaskListSchema,
} from './sessions.js';
export { isStreamId, streamIdForm } from './stream-id.js';
export { type Health, healthSchema, readinessSchema, type SystemState, systemStateSchema } from './system.js';
export { type UsageTotals, usageTotalsSchema } from './usage-totals.js';
export {
  maxDeliveryListLimit,
  type WebhookDelivery,
  type WebhookDeliveryList,
  webhookDeliveryListQuerySchema,
  webhookDeliveryListSchema,
  webhookDeliveryParamsSchema,
  webhookDeliverySchema,
  webhookDeliveryStatusSchema,
} from './webhooks.js';
