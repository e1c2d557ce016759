import type { ToolCallPart } from '../../../chat/index.js';
import type { FileChanges, ToolOutcome } from '../../../tools/index.js';
import {
  fileChangeEvents,
  messageAddedEvent,
  toolEndEvent,
  toolResultMessage,
  toolStartEvent,
} from '../../core/run-commits.js';
import type { CrashPointName } from '../../crash-points.js';
import { stepJobId } from '../../ids.js';
import { iterationAfterTools, type ToolJobData } from '../../job-data.js';
import { journalField, type ToolOutcomeEntry } from '../../journal.js';
import { commit, done, enqueue, type NextStep, type StepAction } from '../runner/step-action.js';
import type { StepContext } from '../runner/step-context.js';
import type { RepeatCause, ToolCallReport } from '../runner/step-observer.js';
import type { ToolCallResult } from './tool-call-middleware.js';

/**
 * The last stage of a tool call: its outcome recorded (commit `tool:<n>:<i>:outcome`, with the result in the
 * chat's pending entries), and the next iteration added when the call completes its iteration's batch.
 */

/** When a call began (its intent's time), whether this execution ran it again, and whether its tool exists. */
export interface Began {
  atMs: number;
  repeat?: RepeatCause | undefined;
  known: boolean;
}

/** A call's Began for its report, or nothing when telemetry is off (nothing built on a step's hot path). */
export function beganIfObserved(
  context: StepContext,
  atMs: number,
  known: boolean,
  repeat?: RepeatCause,
): Began | undefined {
  return context.services.observer ? { atMs, known, repeat } : undefined;
}

/** Records the call's outcome (and its start event when the call never started); then what comes next. */
export function commitOutcome(
  context: StepContext,
  data: ToolJobData,
  call: ToolCallPart,
  outcome: ToolCallResult & { interrupted?: ToolOutcomeEntry['interrupted']; fileChanges?: FileChanges },
  withStartEvent: boolean,
  crash: { before?: CrashPointName; after?: CrashPointName } = {},
  /** When the call began (its intent, for a call that waited) and whether this execution ran it again. */
  /** Built only when telemetry is on (see beganIfObserved). */
  began?: Began,
): StepAction {
  const now = context.services.now().toISOString();
  const run = { id: data.run_id, agent: data.agent, chat_id: data.chat_id };
  const entry: ToolOutcomeEntry = {
    v: 1,
    is_error: outcome.isError,
    ...(outcome.interrupted ? { interrupted: outcome.interrupted } : {}),
    at: now,
    ...(outcome.middleware ? { middleware: outcome.middleware } : {}),
  };
  const message = toolResultMessage({
    runId: data.run_id,
    iteration: data.iteration,
    index: data.index,
    call,
    content: outcome.content,
    isError: outcome.isError,
    images: outcome.images,
    now,
  });
  const events = [
    ...fileChangeEvents(run, data.iteration, call, outcome.fileChanges, now),
    toolEndEvent(run, data.iteration, call, entry, outcome.content),
  ];
  if (withStartEvent) events.unshift(toolStartEvent(run, data.iteration, call, now));
  return commit(
    {
      op: 'tool_outcome',
      request: {
        iteration: data.iteration,
        index: data.index,
        calls: data.calls,
        replyIndex: data.reply_index,
        outcome: entry,
        message,
        messageAdded: messageAddedEvent(run, message, data.reply_index + 1 + data.index, now),
        events,
        // Added by the commit that completes the batch, in its write (decision 0051).
        next: nextSteps(data),
      },
    },
    {
      what: `recording the outcome of ${call.name}`,
      ...crash,
      andThen: (result) => {
        // Reported once: by the execution whose commit recorded the outcome.
        if (result.status === 'ok')
          context.services.observer?.toolCall(
            toolReport(data, call, outcome, began ?? { atMs: Date.now(), known: false }),
          );
        if (result.status === 'ok' && result.completedBatch)
          return nextIteration(data, result.enqueued === true);
        if (result.status === 'done') return continueAfterTools(context, data);
        return done;
      },
    },
  );
}

function toolReport(
  data: ToolJobData,
  call: ToolCallPart,
  outcome: ToolOutcome,
  began: Began,
): ToolCallReport {
  return {
    run: { id: data.run_id, root_run_id: data.root_run_id ?? null, session_id: data.session_id },
    agent: data.agent,
    jobId: stepJobId.tool(data.run_id, data.iteration, data.index),
    iteration: data.iteration,
    toolName: call.name,
    toolKnown: began.known,
    toolCallId: call.id,
    startMs: began.atMs,
    endMs: Date.now(),
    isError: outcome.isError,
    repeat: began.repeat,
    arguments: call.arguments,
    result: outcome.content,
  };
}

/** What follows the call when it completes its batch: the next iteration. */
function nextSteps(data: ToolJobData): NextStep[] {
  return [{ kind: 'iteration', data: iterationAfterTools(data) }];
}

/**
 * The batch is complete: the next iteration (adding is idempotent: the job id is fixed), unless the commit
 * that completed the batch added it in its write (`added`); the crash point stays where the step adds it.
 */
export function nextIteration(data: ToolJobData, added = false): StepAction {
  return enqueue(added ? [] : nextSteps(data), { before: 'tool.before_next_iteration' });
}

/**
 * This call's outcome was recorded by an earlier attempt, which may have died before adding the next
 * iteration: add it when the batch is complete.
 */
export async function continueAfterTools(context: StepContext, data: ToolJobData): Promise<StepAction> {
  const fields = [journalField.results(data.iteration)];
  for (let index = 0; index < data.calls; index += 1)
    fields.push(journalField.toolOutcome(data.iteration, index));
  const [results, ...outcomes] = await context.store.journalFields(fields);
  return results || outcomes.every((outcome) => outcome !== null) ? nextIteration(data) : done;
}
