import type { Message } from '../chat/index.js';
import type { SentMessage } from '../engine/index.js';
import type { RatchetEvent } from '../events/event.js';
import type {
  SentMessageReply,
  WireEvent,
  Question as WireQuestion,
  Run as WireRun,
  Session as WireSession,
} from '../wire/index.js';
import {
  type QuestionRecord,
  type RunView,
  resultMetadataOf,
  runDurationMs,
  type SessionView,
} from '../workflows/index.js';

/** Engine views as the API shows them: field by field, so nothing internal leaks by accident. */

export function toWireSession(session: SessionView): WireSession {
  return {
    id: session.id,
    agent: session.agent,
    metadata: session.metadata,
    status: session.status,
    active_run_id: session.active_run_id,
    usage: session.usage,
    created_at: session.created_at,
    queued_messages: (session.queued_messages ?? []).map((message) => ({
      id: message.id,
      parts: message.parts,
      sent_at: message.sent_at,
      ...(message.steered_to === undefined ? {} : { steered_to: message.steered_to }),
    })),
  };
}

export function toWireSentMessage(sent: SentMessage): SentMessageReply {
  const base = { delivery: sent.delivery, run_id: sent.runId, session_id: sent.sessionId };
  switch (sent.delivery) {
    case 'started':
      return sent.replayed === true ? { ...base, replayed: true as const } : base;
    case 'queued':
    case 'steered':
      return { ...base, message_id: sent.messageId, position: sent.position };
    case 'interrupted':
      return { ...base, interrupted_run_id: sent.interruptedRunId };
  }
}

export function toWireQuestion(question: QuestionRecord): WireQuestion {
  return {
    id: question.id,
    session_id: question.session_id,
    run_id: question.run_id,
    agent: question.agent,
    kind: question.kind,
    question: question.question,
    options: question.options,
    tool: question.tool,
    status: question.status,
    answer: question.answer,
    answered_by: question.answered_by,
    timeout_at: question.timeout_at,
    default_answer: question.default_answer,
    created_at: question.created_at,
    answered_at: question.answered_at,
  };
}

export function toWireRun(run: RunView): WireRun {
  return {
    id: run.id,
    session_id: run.session_id,
    agent: run.agent,
    parent_run_id: run.parent?.run_id ?? null,
    depth: run.parent?.depth ?? 0,
    status: run.status,
    result: run.result,
    error: run.error,
    usage: run.usage,
    cost_usd: run.cost_usd,
    retry_waste: run.retry_waste,
    iterations: run.iteration,
    progress: run.progress,
    pending_question: run.pending_question ? toWireQuestion(run.pending_question) : null,
    waiting: run.waiting,
    input_line: run.input_line,
    created_at: run.created_at,
    finished_at: run.finished_at,
    duration_ms: runDurationMs(run, Date.now()),
    deadline_at: run.deadline_at,
    max_iterations: run.max_iterations,
    origin: run.origin,
    retried_by: run.retried_by,
    tenant: run.tenant,
    priority: run.priority,
    queued_reason: run.queued_reason ?? null,
    waiting_for: run.status === 'waiting_for_worker' ? (run.waiting_for ?? null) : null,
    definition: run.definition,
    metadata: resultMetadataOf(run, new Date().toISOString()),
  };
}

export function toWireMessage(message: Message, index: number): Message & { index: number } {
  return { ...message, index };
}

/** An event as sent in an SSE frame: without the record version. */
export function toWireEvent(event: RatchetEvent): WireEvent {
  return {
    id: event.id,
    kind: event.kind,
    run_id: event.run_id,
    agent: event.agent,
    time: event.time,
    data: event.data,
  } as WireEvent;
}
