import type { z } from 'zod';
import type {
  acceptedRunSchema,
  agentListSchema,
  createRunBodySchema,
  errorBodySchema,
  healthSchema,
  questionSchema,
  respondAcceptedSchema,
  runSchema,
  sessionNoteListSchema,
  sessionSchema,
  sessionTaskListSchema,
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
export type SessionTask = z.output<typeof sessionTaskListSchema>['tasks'][number];
export type SessionNote = z.output<typeof sessionNoteListSchema>['notes'][number];
export type AnswerAccepted = z.output<typeof respondAcceptedSchema>;
export type Run = z.output<typeof runSchema>;
export type RunStatus = Run['status'];
export type AgentSummary = z.output<typeof agentListSchema>['agents'][number];
export type Health = z.output<typeof healthSchema>;
/** What POST /v1/runs takes; the server validates it and names any invalid field (400 `issues`). */
export type SubmitRunInput = z.input<typeof createRunBodySchema>;
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
