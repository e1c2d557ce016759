import { type ToolCallPart, toolCallPartSchema, toolCallsOf } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { stepJobId } from '../../ids.js';
import type { ToolJobData } from '../../job-data.js';
import {
  journalField,
  type ToolIntent,
  type ToolOutcomeEntry,
  toolIntentSchema,
  toolOutcomeSchema,
} from '../../journal.js';
import type { RunRecord } from '../../run-record.js';
import type { StepContext } from '../runner/step-context.js';

/** What a tool call's step reads of its call: the recorded call, its ledger entries, its idempotency key. */

export interface LoadedCall {
  record: RunRecord;
  call: ToolCallPart;
  intent: ToolIntent | undefined;
  outcome: ToolOutcomeEntry | undefined;
}

/** For the failure path: the run, the call (from the recorded reply in the chat) and its ledger entries. */
export async function loadCall(context: StepContext, data: ToolJobData): Promise<LoadedCall | undefined> {
  const intentField = journalField.toolIntent(data.iteration, data.index);
  const outcomeField = journalField.toolOutcome(data.iteration, data.index);
  const loaded = await context.store.loadWithChatEntry([intentField, outcomeField], data.reply_index);
  if (!loaded.run) return undefined;
  const run = loaded.run.record;
  const reply = loaded.entry;
  const ledger = loaded.journal;
  if (!reply) {
    throw new RatchetError(
      'record_invalid',
      `chat entry ${data.reply_index} of chat ${data.chat_id} of ${data.run_id} is missing`,
    );
  }
  const call = toolCallsOf(reply)[data.index];
  if (!call)
    throw new RatchetError('record_invalid', `chat entry ${data.reply_index} has no tool call ${data.index}`);
  const [intentText, outcomeText] = ledger;
  return {
    record: run,
    call,
    intent: intentText ? parseJsonRecord(toolIntentSchema, intentText, intentField) : undefined,
    outcome: outcomeText ? parseJsonRecord(toolOutcomeSchema, outcomeText, outcomeField) : undefined,
  };
}

/** The same on every attempt of the call: derived from the run, the iteration and the call's position. */
export function idempotencyKey(data: ToolJobData): string {
  return stepJobId.tool(data.run_id, data.iteration, data.index);
}

/**
 * The call's handler asked a question, started child runs or parked itself (state_watch) before: an earlier
 * attempt was parked, not cut short.
 */
export async function parkedBefore(context: StepContext): Promise<boolean> {
  return context.store.hasJournalField(journalField.parked(context.jobId));
}

/** The call as begin-tool-call read it from the recorded reply (one part, not the whole message). */
export function callOf(data: ToolJobData, call: string): ToolCallPart {
  return parseJsonRecord(
    toolCallPartSchema,
    call,
    `tool call ${data.index} of chat entry ${data.reply_index} of ${data.run_id}`,
  );
}
