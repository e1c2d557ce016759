import { Job } from 'bullmq';
import { encodeChatEntry } from '../chat/index.js';
import { RatchetError } from '../errors/index.js';
import type { RunCreation } from '../workflows/core/run-creation.js';
import { stepJobId } from '../workflows/ids.js';
import { chatKey, type KeySpace, type RunKeys, retentionKeys, runKeys } from './keys.js';
import { encodeEvent } from './run-store.js';
import type { StepQueues } from './step-queues.js';

export type RunWriteCode =
  | 'OK'
  | 'NO_SESSION'
  | 'SESSION_BUSY'
  | 'RUN_EXISTS'
  | 'CONFLICT'
  | 'PARENT_FINISHED';

/**
 * Writes a planned run and adds its first step, in one transaction: no crash leaves a run without a step.
 * When the create-run script refuses, the step is added all the same; it finds no run (or a run further on)
 * and ends. A child run names its parent's keys: it is recorded among the parent's children, and refused
 * once the parent is finished.
 */
export async function writeRun(input: {
  queues: StepQueues;
  space: KeySpace;
  plan: RunCreation;
  chatLength: number;
  eventsMaxLength: number;
  parent?: RunKeys;
}): Promise<{ code: RunWriteCode; detail: string | undefined }> {
  const { plan, space } = input;
  const { record } = plan;
  const keys = runKeys(space, record.session_id, record.id);
  const queue = input.queues.queue(keys.shard);
  const client = await queue.backend.client;
  const transaction = client.multi();
  (transaction as unknown as Record<string, (...args: unknown[]) => unknown>).ratchetCreateRun?.(
    keys.session,
    chatKey(space, record.session_id, record.chat_id),
    keys.events,
    keys.run,
    keys.runs,
    input.parent?.run ?? keys.run,
    input.parent?.children ?? keys.run,
    retentionKeys(space, keys.shard).sessions,
    plan.sessionRecord ? JSON.stringify(plan.sessionRecord) : '',
    record.id,
    JSON.stringify(record),
    input.chatLength,
    input.eventsMaxLength,
    plan.messages.length,
    ...plan.messages.map(encodeChatEntry),
    ...plan.events.map(encodeEvent),
  );
  const jobId = stepJobId.iteration(record.id, 1);
  await new Job(queue, plan.first.kind, plan.first.data, input.queues.jobOptions(jobId), jobId).addJob(
    transaction,
  );
  const results = await transaction.exec();
  if (!results) throw new RatchetError('redis_unavailable', 'the transaction creating the run was aborted');
  const [createError, createReply] = results[0] ?? [];
  if (createError) throw createError;
  const [code, detail] = createReply as string[];
  return { code: code as RunWriteCode, detail };
}
