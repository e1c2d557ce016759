import { encodeChatEntry } from '../chat/index.js';
import type { RunCreation } from '../workflows/core/run-creation.js';
import { stepJobId } from '../workflows/ids.js';
import type { RunWriteCode } from '../workflows/step-scheduler.js';
import { CheckedWriter, type RunWriterOptions } from './checked-writer.js';
import { DefinitionStore } from './definition-store.js';
import { chatKey, type RunKeys, retentionKeys, runKeys } from './keys.js';
import { encodeEvent } from './run-store.js';

export interface RunWrite {
  plan: RunCreation;
  chatLength: number;
  /** A child run names its parent's keys: it is recorded among the parent's children, and refused once
   * the parent is finished. */
  parent?: RunKeys;
  /**
   * A submission's idempotency key (decision 0035): create-run answers IDEMPOTENT (or IDEMPOTENCY_MISMATCH)
   * with the run the key started, or records the key with the run it writes, in the same script.
   */
  idempotency?: IdempotentWrite;
  /**
   * Check under WATCH even for a new session: its id is derived, not random (a schedule's fire), so the run may
   * exist already, and a refused write must add no step.
   */
  checked?: boolean;
  /**
   * Adds the first step delayed by this long (a root run under fair admission, decision 0038): the writer's
   * caller asks for the run's admission next, which wakes the step; the delay is the safety net.
   */
  firstStepDelayMs?: number;
}

export interface IdempotentWrite {
  /** The Redis key (keys.ts idempotencyKey), in the session's shard. */
  key: string;
  /** What the submission asked for (a digest), compared with the one recorded. */
  fingerprint: string;
  ttlS: number;
}

/**
 * Writes planned runs and adds their first steps, as checked writes (checked-writer.ts): the run and its
 * first step in one MULTI, sent only when create-run, run first as a check under WATCH, said OK, so no crash
 * leaves a run without a step and a refused run (a busy session, a finished parent) leaves no step behind.
 */
export class RunWriter {
  private readonly writer: CheckedWriter;
  private readonly definitions: DefinitionStore;

  constructor(private readonly options: RunWriterOptions) {
    this.writer = new CheckedWriter({ ...options, name: 'ratchet-run-writer' });
    this.definitions = new DefinitionStore(options.redis, options.space);
  }

  /** Writes the run (and its first step) unless create-run refuses it. */
  async write(input: RunWrite): Promise<{ code: RunWriteCode; detail: string | undefined }> {
    const { plan, idempotency } = input;
    const { record } = plan;
    const space = this.options.space;
    // First, idempotently: a run names only a definition that is recorded (decision 0030).
    if (plan.definition) await this.definitions.record(plan.definition);
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
      idempotency?.key ?? keys.run,
      keys.queued,
    ];
    const idempotencyRecord = idempotency
      ? JSON.stringify({
          v: 1,
          run_id: record.id,
          session_id: record.session_id,
          fingerprint: idempotency.fingerprint,
        })
      : '';
    const scriptArgs = (mode: 'check' | 'create') => [
      mode,
      plan.sessionRecord ? JSON.stringify(plan.sessionRecord) : '',
      record.id,
      JSON.stringify(record),
      input.chatLength,
      this.options.eventsMaxLength,
      idempotencyRecord,
      idempotency?.ttlS ?? 0,
      idempotency?.fingerprint ?? '',
      // A check stops before the entries: it need not carry them.
      ...(mode === 'check'
        ? [0]
        : [plan.messages.length, ...plan.messages.map(encodeChatEntry), ...plan.events.map(encodeEvent)]),
    ];
    const jobId = stepJobId.iteration(record.id, 1);
    const { code, detail } = await this.writer.write({
      // Everything create-run's answer depends on: the session (record, active run, queued messages), the
      // chat's length, the run itself and the parent run.
      watch: [
        keys.session,
        chat,
        keys.run,
        ...(input.parent ? [] : [keys.queued]),
        ...(input.parent ? [input.parent.run] : []),
        ...(idempotency ? [idempotency.key] : []),
      ],
      script: 'create-run',
      // A run that starts a session under a new random id has nothing to be refused by: no other run, no
      // parent, no earlier submission. Any other may be (a busy session, a finished parent, a replay).
      refusable:
        input.checked === true ||
        plan.sessionRecord === undefined ||
        input.parent !== undefined ||
        idempotency !== undefined,
      keys: scriptKeys,
      args: scriptArgs,
      step: {
        shard: keys.shard,
        kind: plan.first.kind,
        data: plan.first.data,
        jobId,
        ...(input.firstStepDelayMs === undefined ? {} : { delayMs: input.firstStepDelayMs }),
      },
    });
    return { code: code as RunWriteCode, detail };
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
