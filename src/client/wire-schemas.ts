import type { z } from 'zod';
import type {
  acceptedRunSchema,
  agentListSchema,
  agentMemorySchema,
  createRunBodySchema,
  errorBodySchema,
  forkRunBodySchema,
  healthSchema,
  inboxSchema,
  messageListSchema,
  questionSchema,
  respondAcceptedSchema,
  retryRunBodySchema,
  runListInputSchema,
  runListSchema,
  runMessageListSchema,
  runSchema,
  runStepsSchema,
  runSummarySchema,
  runTreeSchema,
  sessionListInputSchema,
  sessionListSchema,
  sessionNoteListSchema,
  sessionSchema,
  sessionTaskListSchema,
  stepsQuerySchema,
  systemStateSchema,
  usageTotalsSchema,
} from '../api/schemas.js';
import { type EventData, type EventKind, eventDataSchemas } from '../events/event.js';
import type { ApprovalAnswer, QuestionResponse } from '../workflows/question-record.js';

/**
 * The client's types, all inferred from the server's own wire schemas (src/api/schemas.ts, which loads
 * nothing but zod and the record and event schemas, so a browser can load it too).
 */

export type WireErrorCode = z.output<typeof errorBodySchema>['error']['code'];
export type AcceptedRun = z.output<typeof acceptedRunSchema>;
export type UsageTotals = z.output<typeof usageTotalsSchema>;
export type Session = z.output<typeof sessionSchema>;
export type Question = z.output<typeof questionSchema>;
/** A message of a session's chat, with its index in the chat (GET /v1/sessions/:id/messages). */
export type ChatMessage = z.output<typeof messageListSchema>['messages'][number];
/** GET /v1/questions: every pending question of every session, newest first; `truncated` when more are. */
export type Inbox = z.output<typeof inboxSchema>;
export type InboxQuestion = Inbox['questions'][number];
export type SessionTask = z.output<typeof sessionTaskListSchema>['tasks'][number];
export type SessionNote = z.output<typeof sessionNoteListSchema>['notes'][number];
export type AnswerAccepted = z.output<typeof respondAcceptedSchema>;
export type Run = z.output<typeof runSchema>;
export type RunStatus = Run['status'];
export type AgentSummary = z.output<typeof agentListSchema>['agents'][number];
/** GET /v1/agents/:name/memory: what an agent remembers across sessions (its notes and the deployment's). */
export type AgentMemory = z.output<typeof agentMemorySchema>;
export type MemoryNote = AgentMemory['notes'][number];
export type Health = z.output<typeof healthSchema>;
/** What POST /v1/runs takes; the server validates it and names any invalid field (400 `issues`). */
export type SubmitRunInput = z.input<typeof createRunBodySchema>;

/** One page of GET /v1/runs: `next_cursor` is null on the last page. */
export type RunPage = z.output<typeof runListSchema>;
/** A run as the run index lists it (GET /v1/runs/:id, `client.get`, has the rest). */
export type RunListItem = RunPage['runs'][number];
/** The statuses GET /v1/runs lists and filters by (`waiting_input`: a run with a pending question). */
export type RunListStatus = RunListItem['status'];
type ListTime = string | Date;
/**
 * GET /v1/runs's filters; all optional, and they combine. `since`/`until` take a Date or an ISO 8601 time
 * in UTC; `status` one status or several.
 */
export type RunListFilters = Omit<z.input<typeof runListInputSchema>, 'status' | 'since' | 'until'> & {
  status?: RunListStatus | readonly RunListStatus[];
  since?: ListTime;
  until?: ListTime;
};
/** GET /v1/runs/summary: how many runs have each status. */
export type RunSummary = z.output<typeof runSummarySchema>;
/** One page of GET /v1/sessions, most recently active first. */
export type SessionPage = z.output<typeof sessionListSchema>;
export type SessionListItem = SessionPage['sessions'][number];
/** GET /v1/sessions's filters; all optional. */
export type SessionListFilters = Omit<z.input<typeof sessionListInputSchema>, 'since' | 'until'> & {
  since?: ListTime;
  until?: ListTime;
};
/** GET /v1/runs/:id/messages: the chat the run works on (`chat_id`), each message with its index. */
export type RunMessages = z.output<typeof runMessageListSchema>;
/** GET /v1/runs/:id/tree: the run, then each run below it, depth first. */
export type RunTree = z.output<typeof runTreeSchema>;
export type RunTreeNode = RunTree['runs'][number];
/** One page of GET /v1/runs/:id/steps: `next_from` is null on the last page. */
export type RunSteps = z.output<typeof runStepsSchema>;
export type IterationStep = RunSteps['steps'][number];
/** GET /v1/runs/:id/steps's paging: the first iteration, iterations per page, characters shown per text. */
export type StepsQuery = Partial<z.output<typeof stepsQuerySchema>>;
/** GET /v1/system: workers, step queues, runs by status, version and config hash. */
export type SystemState = z.output<typeof systemStateSchema>;
/** New limits for a retry (POST /v1/runs/:id/retry); each at most the agent's. */
export type RetryRunInput = NonNullable<z.input<typeof retryRunBodySchema>>;
/** POST /v1/runs/:id/fork's body: where to fork, and what the new run continues with. */
export type ForkRunInput = z.input<typeof forkRunBodySchema>;
/** A decision on a tool call awaiting approval; `arguments` replaces the model's (checked by the server). */
/** Text for `ask_user`, `"raise"`/`"stop"` for `budget`, a decision (or `"approve"`/`"reject"`) for `approval`. */
export type { ApprovalAnswer, QuestionResponse };

/** One event as the SSE route sends it in a frame's `data` (the server's `wireEventSchema`), typed by kind. */
export type RatchetClientEvent = {
  [Kind in EventKind]: {
    /** The event's id in the session's log (the SSE `id`): resume after it. */
    id: string;
    kind: Kind;
    run_id: string;
    agent: string;
    time: string;
    data: EventData<Kind>;
  };
}[EventKind];

export function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(eventDataSchemas, kind);
}
