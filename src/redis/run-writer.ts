import { Job, Queue } from 'bullmq';
import { encodeChatEntry } from '../chat/index.js';
import type { RunCreation } from '../workflows/core/run-creation.js';
import { stepJobId } from '../workflows/ids.js';
import { closeRedis, duplicateClient, type RedisClient } from './connection.js';
import {
  chatKey,
  type KeySpace,
  type RunKeys,
  retentionKeys,
  runKeys,
  shardPrefix,
  stepQueueName,
} from './keys.js';
import { encodeEvent } from './run-store.js';
import { defineScripts } from './scripts.js';
import type { StepQueues } from './step-queues.js';

export type RunWriteCode =
  | 'OK'
  | 'NO_SESSION'
  | 'SESSION_BUSY'
  | 'RUN_EXISTS'
  | 'CONFLICT'
  | 'PARENT_FINISHED';

export interface RunWrite {
  plan: RunCreation;
  chatLength: number;
  /** A child run names its parent's keys: it is recorded among the parent's children, and refused once
   * the parent is finished. */
  parent?: RunKeys;
}

/** The commands a write sends outside its MULTI (ioredis has them; BullMQ's client type does not say so). */
interface WriterCommands {
  watch(...keys: string[]): Promise<unknown>;
  unwatch(): Promise<unknown>;
  ratchetCreateRun(...keysAndArgs: unknown[]): Promise<unknown>;
}

/** How often a write checks again when a key it watched changed between its check and its commit. */
const watchedChangeTries = 5;

/**
 * Writes planned runs and adds their first steps. A run and its first step are written in one MULTI, so no
 * crash leaves a run without a step; and the MULTI is sent only when create-run, run first as a check under
 * WATCH of every key its answer depends on, said OK, so a refused run (a busy session, a finished parent)
 * leaves no step behind. WATCH belongs to a connection, so the writer has one of its own and writes one run
 * at a time on it.
 */
export class RunWriter {
  private readonly connection: RedisClient;
  /** Defines BullMQ's scripts on the writer's connection: the first step is added through them. */
  private readonly commandQueue: Queue;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: {
      redis: RedisClient;
      space: KeySpace;
      queues: StepQueues;
      eventsMaxLength: number;
    },
  ) {
    this.connection = duplicateClient(options.redis, { connectionName: 'ratchet-run-writer' });
    this.connection.on('error', () => {
      // Reported by the queues' own error listeners; a write in flight fails with the error.
    });
    defineScripts(this.connection);
    this.commandQueue = new Queue(stepQueueName, {
      connection: this.connection,
      prefix: shardPrefix(options.space, 0),
      skipMetasUpdate: true,
    });
    this.commandQueue.on('error', () => {
      // As above.
    });
  }

  /** Writes the run (and its first step) unless create-run refuses it; one write at a time. */
  write(input: RunWrite): Promise<{ code: RunWriteCode; detail: string | undefined }> {
    const written = this.tail.then(() => this.writeNow(input));
    this.tail = written.catch(() => undefined);
    return written;
  }

  private async writeNow(input: RunWrite): Promise<{ code: RunWriteCode; detail: string | undefined }> {
    const { plan } = input;
    const { record } = plan;
    const space = this.options.space;
    const keys = runKeys(space, record.session_id, record.id);
    const chat = chatKey(space, record.session_id, record.chat_id);
    const scriptKeys = [
      keys.session,
      chat,
      keys.events,
      keys.run,
      keys.runs,
      input.parent?.run ?? keys.run,
      input.parent?.children ?? keys.run,
      retentionKeys(space, keys.shard).sessions,
      keys.runIndex,
    ];
    const scriptArgs = (mode: 'check' | 'create') => [
      mode,
      plan.sessionRecord ? JSON.stringify(plan.sessionRecord) : '',
      record.id,
      JSON.stringify(record),
      input.chatLength,
      this.options.eventsMaxLength,
      // A check stops before the entries: it need not carry them.
      ...(mode === 'check'
        ? [0]
        : [plan.messages.length, ...plan.messages.map(encodeChatEntry), ...plan.events.map(encodeEvent)]),
    ];
    const client = await this.commandQueue.backend.client;
    const commands = client as unknown as WriterCommands;
    const queue = this.options.queues.queue(keys.shard);
    const jobId = stepJobId.iteration(record.id, 1);
    for (let tries = 0; tries < watchedChangeTries; tries += 1) {
      let watching = false;
      try {
        // Everything create-run's answer depends on: the session (record, active run), the chat's length,
        // the run itself and the parent run.
        await commands.watch(keys.session, chat, keys.run, ...(input.parent ? [input.parent.run] : []));
        watching = true;
        const [checked, checkedDetail] = (await commands.ratchetCreateRun(
          ...scriptKeys,
          ...scriptArgs('check'),
        )) as string[];
        if (checked !== 'OK') return { code: checked as RunWriteCode, detail: checkedDetail };
        const transaction = client.multi();
        (transaction as unknown as Record<string, (...args: unknown[]) => unknown>).ratchetCreateRun?.(
          ...scriptKeys,
          ...scriptArgs('create'),
        );
        await new Job(
          queue,
          plan.first.kind,
          plan.first.data,
          this.options.queues.jobOptions(jobId),
          jobId,
        ).addJob(transaction);
        const results = await transaction.exec();
        watching = false;
        // null: a watched key changed after the check (EXEC ran nothing); check again.
        if (!results) continue;
        const [createError, createReply] = results[0] ?? [];
        if (createError) throw createError;
        const [code, detail] = createReply as string[];
        return { code: code as RunWriteCode, detail };
      } finally {
        if (watching) await commands.unwatch().catch(() => undefined);
      }
    }
    return { code: 'CONFLICT', detail: 'watched keys kept changing' };
  }

  async close(): Promise<void> {
    try {
      await this.tail;
      await this.commandQueue.close();
    } finally {
      await closeRedis(this.connection);
    }
  }
}
