import { Job, Queue } from 'bullmq';
import { closeRedis, duplicateClient, type RedisClient } from './connection.js';
import { type KeySpace, shardPrefix, stepQueueName } from './keys.js';
import { defineScripts, type ScriptName, scriptCommand } from './scripts.js';
import { queuedRunPriority, type StepQueues } from './step-queues.js';

/**
 * A write of a run with its first step (a new run, a child run, a retry or a fork): the script runs first as
 * a check under WATCH of every key its answer depends on, and only when it says OK are the script and the
 * step's add sent in one MULTI. So no crash leaves a run without its step, and a refused write adds no step
 * (decision 0015).
 */
export interface CheckedWrite {
  /** Keys whose change between the check and the MULTI makes the check stale. */
  watch: readonly string[];
  /** The script (create-run, retry-run, fork-run); its ARGV[1] is the mode. */
  script: ScriptName;
  keys: readonly string[];
  args: (mode: 'check' | 'create') => readonly (string | number)[];
  /**
   * The run's first step, added with the write to the step queue of its shard; delayed by `delayMs` when
   * given (a run that waits for its admission, decision 0038: woken when admitted).
   */
  step: { shard: number; kind: string; data: unknown; jobId: string; delayMs?: number };
  /**
   * false when the script cannot refuse this write (a run in a session it creates under a new random id):
   * the MULTI is then sent at once, in one round trip, with no WATCH and no check.
   */
  refusable: boolean;
}

export interface CheckedWriteResult {
  /** The script's code: OK, or why it refused; CONFLICT when the watched keys kept changing. */
  code: string;
  detail: string | undefined;
}

/** The commands a write sends outside its MULTI (ioredis has them; BullMQ's client type does not say so). */
interface WatchCommands {
  watch(...keys: string[]): Promise<unknown>;
  unwatch(): Promise<unknown>;
}

/** The client BullMQ gives a lane's queue (its own client type). */
type LaneClient = Awaited<Queue['backend']['client']>;

/** How often a write checks again when a key it watched changed between its check and its commit. */
const watchedChangeTries = 5;

/** One connection a write WATCHes on, with BullMQ's scripts defined on it (the step is added through them). */
interface Lane {
  connection: RedisClient;
  commandQueue: Queue;
}

/** What a writer of runs with their first steps (RunWriter, ContinuationStore) is made from. */
export interface RunWriterOptions {
  redis: RedisClient;
  space: KeySpace;
  queues: StepQueues;
  eventsMaxLength: number;
}

export interface CheckedWriterOptions {
  redis: RedisClient;
  space: KeySpace;
  /** The step queues the first steps are added to (their job options too). */
  queues: StepQueues;
  /** The connections' client name. */
  name: string;
  /**
   * Writes at once: WATCH belongs to a connection, so each write holds one of its own until it is done.
   * Connections are opened as concurrent writes need them, up to this many.
   */
  maxConcurrent?: number;
}

const defaultMaxConcurrent = 8;

/**
 * Carries out checked writes on a small pool of connections opened on demand. One connection would
 * serialize every run start of a process behind two round trips each, halving how many runs an API can
 * start under load (measured); a pool keeps them concurrent.
 */
export class CheckedWriter {
  private readonly lanes: Lane[] = [];
  private readonly idle: Lane[] = [];
  private readonly waiting: ((lane: Lane) => void)[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Never WATCHes, so writes that need no check share it, pipelined, as many at once as come. */
  private unwatched: Lane | undefined;
  private closed = false;

  constructor(private readonly options: CheckedWriterOptions) {}

  write(write: CheckedWrite): Promise<CheckedWriteResult> {
    if (this.closed) return Promise.reject(new Error('the checked writer is closed'));
    const written = write.refusable
      ? this.withLane((lane) => this.writeOn(lane, write))
      : this.writeUnchecked(write);
    this.inFlight.add(written);
    void written.finally(() => this.inFlight.delete(written)).catch(() => undefined);
    return written;
  }

  private async withLane<T>(work: (lane: Lane) => Promise<T>): Promise<T> {
    const lane = await this.acquire();
    try {
      return await work(lane);
    } finally {
      const next = this.waiting.shift();
      if (next) next(lane);
      else this.idle.push(lane);
    }
  }

  private async writeUnchecked(write: CheckedWrite): Promise<CheckedWriteResult> {
    this.unwatched ??= this.openLane();
    const written = await this.commit(await this.unwatched.commandQueue.backend.client, write);
    if (!written) throw new Error(`${write.script}: EXEC ran nothing although nothing was watched`);
    return written;
  }

  private acquire(): Promise<Lane> {
    const lane = this.idle.pop();
    if (lane) return Promise.resolve(lane);
    if (this.lanes.length < (this.options.maxConcurrent ?? defaultMaxConcurrent)) {
      const lane = this.openLane();
      this.lanes.push(lane);
      return Promise.resolve(lane);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private openLane(): Lane {
    const connection = duplicateClient(this.options.redis, { connectionName: this.options.name });
    connection.on('error', () => {
      // Reported by the queues' own error listeners; a write in flight fails with the error.
    });
    defineScripts(connection);
    const commandQueue = new Queue(stepQueueName, {
      connection,
      prefix: shardPrefix(this.options.space, 0),
      skipMetasUpdate: true,
    });
    commandQueue.on('error', () => {
      // As above.
    });
    return { connection, commandQueue };
  }

  private async writeOn(lane: Lane, write: CheckedWrite): Promise<CheckedWriteResult> {
    const client = await lane.commandQueue.backend.client;
    const commands = client as unknown as WatchCommands & Record<string, (...args: unknown[]) => unknown>;
    const script = commands[scriptCommand(write.script)];
    if (!script) throw new Error(`${write.script} is not defined on the writer's connection`);
    for (let tries = 0; tries < watchedChangeTries; tries += 1) {
      let watching = false;
      try {
        // Sent together (one round trip): the connection runs them in order, so the check reads what WATCH
        // guards.
        watching = true;
        const [, [checked, checkedDetail]] = (await Promise.all([
          commands.watch(...write.watch),
          script.call(commands, ...write.keys, ...write.args('check')),
        ])) as [unknown, string[]];
        if (checked !== 'OK') return { code: checked ?? 'ERROR', detail: checkedDetail };
        const written = await this.commit(client, write);
        watching = false;
        // undefined: a watched key changed after the check (EXEC ran nothing); check again.
        if (written) return written;
      } finally {
        if (watching) await commands.unwatch().catch(() => undefined);
      }
    }
    return { code: 'CONFLICT', detail: 'watched keys kept changing' };
  }

  /** The MULTI of the script (create mode) and the step's add; undefined when EXEC ran nothing. */
  private async commit(client: LaneClient, write: CheckedWrite): Promise<CheckedWriteResult | undefined> {
    const { step } = write;
    const { queues } = this.options;
    const transaction = client.multi();
    (transaction as unknown as Record<string, (...args: unknown[]) => unknown>)[
      scriptCommand(write.script)
    ]?.(...write.keys, ...write.args('create'));
    const queue = queues.queue(step.shard);
    const options = queues.jobOptions(step.jobId);
    if (step.delayMs !== undefined) {
      // A run waiting for its admission: its step's recheck goes in the slow lane until it is admitted.
      options.delay = step.delayMs;
      options.priority = queuedRunPriority;
    }
    await new Job(queue, step.kind, step.data, options, step.jobId).addJob(transaction);
    const results = await transaction.exec();
    if (!results) return undefined;
    const [error, reply] = results[0] ?? [];
    if (error) throw error;
    const [code, detail] = reply as string[];
    return { code: code ?? 'ERROR', detail };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled(
      [...this.lanes, ...(this.unwatched ? [this.unwatched] : [])].map(async (lane) => {
        try {
          await lane.commandQueue.close();
        } finally {
          await closeRedis(lane.connection);
        }
      }),
    );
  }
}
