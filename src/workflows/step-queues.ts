import { FlowProducer, type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../log/index.js';
import type { KeySpace } from '../redis/keys.js';
import { shardPrefix, stepQueueName } from '../redis/keys.js';
import { stepJobId } from './ids.js';
import type { IterationJobData, ToolJobData } from './job-data.js';

/** Names of BullMQ jobs = step kinds. */
export const stepJobName = { iteration: 'iteration', tool: 'tool', teamTurn: 'team-turn' } as const;
export type StepJobName = (typeof stepJobName)[keyof typeof stepJobName];

export interface StepJobSettings {
  /** BullMQ attempts: the configured step attempts plus headroom for committing a final failure. */
  attempts: number;
  keepCompletedSeconds: number;
}

/** Extra BullMQ attempts beyond `worker.step_attempts`, used only to record a step's final failure. */
export const finalFailureHeadroom = 3;

/** The step queue and flow producer of each shard. */
export class StepQueues {
  readonly queues: Queue[];
  readonly flows: FlowProducer[];

  constructor(
    connection: Redis,
    space: KeySpace,
    private readonly settings: StepJobSettings,
    logger: Logger,
  ) {
    this.queues = [];
    this.flows = [];
    let lastErrorLogged = 0;
    const onError = (error: Error) => {
      // The shared connection reports the same outage once per client: log it at most every 5 s.
      if (Date.now() - lastErrorLogged < 5000) return;
      lastErrorLogged = Date.now();
      logger.warn({ err: error }, 'step queue connection error');
    };
    for (let shard = 0; shard < space.shards; shard += 1) {
      const prefix = shardPrefix(space, shard);
      const queue = new Queue(stepQueueName, { connection, prefix });
      const flow = new FlowProducer({ connection, prefix });
      queue.on('error', onError);
      flow.on('error', onError);
      this.queues.push(queue);
      this.flows.push(flow);
    }
  }

  queue(shard: number): Queue {
    const queue = this.queues[shard];
    if (!queue) throw new Error(`no queue for shard ${shard}`);
    return queue;
  }

  jobOptions(jobId: string): JobsOptions {
    return {
      jobId,
      attempts: this.settings.attempts,
      backoff: { type: 'ratchet' },
      removeOnComplete: { age: this.settings.keepCompletedSeconds },
      removeOnFail: { age: this.settings.keepCompletedSeconds },
    };
  }

  /**
   * Adds iteration n; when the previous iteration asked for tools, the tool calls are added as its children
   * in one atomic flow, and iteration n waits for them without holding a worker (waiting-children).
   * `replyIndex` is the chat position of the reply that made the calls, `toolNames` their tools in order.
   */
  async addIteration(
    shard: number,
    data: IterationJobData,
    replyIndex = 0,
    toolNames: readonly string[] = [],
  ): Promise<void> {
    const jobId = stepJobId.iteration(data.run_id, data.iteration);
    if (data.previous_calls === 0) {
      await this.queue(shard).add(stepJobName.iteration, data, this.jobOptions(jobId));
      return;
    }
    const flow = this.flows[shard];
    if (!flow) throw new Error(`no flow producer for shard ${shard}`);
    const toolIteration = data.iteration - 1;
    await flow.add({
      name: stepJobName.iteration,
      queueName: stepQueueName,
      data,
      opts: this.jobOptions(jobId),
      children: Array.from({ length: data.previous_calls }, (_unused, index) => {
        const toolData: ToolJobData = {
          v: 1,
          session_id: data.session_id,
          run_id: data.run_id,
          agent: data.agent,
          chat_id: data.chat_id,
          iteration: toolIteration,
          index,
          calls: data.previous_calls,
          tool_name: toolNames[index] ?? '',
          reply_index: replyIndex,
          ...(data.lineage ? { lineage: data.lineage } : {}),
          ...(data.group ? { group: data.group } : {}),
        };
        return {
          name: stepJobName.tool,
          queueName: stepQueueName,
          data: toolData,
          // A tool job that fails for good must not park its iteration for ever: the iteration resumes
          // and reports the missing outcome to the model as an error result.
          opts: {
            ...this.jobOptions(stepJobId.tool(data.run_id, toolIteration, index)),
            ignoreDependencyOnFailure: true,
          },
        };
      }),
    });
  }

  /** Adds turn n of a team's run (a team has no tool calls of its own: no flow). */
  async addTeamTurn(shard: number, data: IterationJobData): Promise<void> {
    const jobId = stepJobId.iteration(data.run_id, data.iteration);
    await this.queue(shard).add(stepJobName.teamTurn, data, this.jobOptions(jobId));
  }

  /** Wakes a step parked in the delayed set (a question was answered); a step not parked is left alone. */
  async wake(shard: number, jobId: string): Promise<void> {
    const job = await this.queue(shard).getJob(jobId);
    if (!job) return;
    try {
      if (await job.isDelayed()) await job.promote();
    } catch {
      // It left the delayed set meanwhile: it is running and will find the answer.
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      ...this.queues.map((queue) => queue.close()),
      ...this.flows.map((flow) => flow.close()),
    ]);
  }
}
