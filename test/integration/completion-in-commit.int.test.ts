import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { stepJobId } from '../../src/workflows/ids.js';
import { Harness } from '../helpers/harness.js';

// Decision 0056: the commit that is a step's last write completes the step's own job with BullMQ's
// moveToFinished in its call, and the worker takes the next job from that reply. The job must end exactly as
// BullMQ's own completion leaves it (the run's last iteration, whose commit adds nothing, is completed by
// BullMQ's worker as before: the reference), and no job is completed twice. The kills around it are the
// crash-point suite's (`iteration.after_enqueue`, `tool.before_next_iteration` fall after the completion now).

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const calls = 3;
const script: Script = {
  replies: [
    ...Array.from({ length: calls }, (_unused, index) => ({
      text: `adding ${index}`,
      tool_calls: [
        { name: 'add', arguments: { a: index, b: 1 } },
        { name: 'add', arguments: { a: index, b: 2 } },
      ],
    })),
    { text: 'done adding' },
  ],
};

/** The fields BullMQ's completion writes on a job hash, and how the job stands after it. */
async function finishedAs(current: Harness, jobId: string) {
  const queue = current.engine.queues.queue(0);
  const job = await queue.getJob(jobId);
  expect(job, jobId).toBeDefined();
  return {
    state: await queue.getJobState(jobId),
    returnvalue: job === undefined || job.returnvalue === undefined ? 'absent' : job.returnvalue,
    attemptsMade: job?.attemptsMade,
    finished: (job?.finishedOn ?? 0) >= (job?.processedOn ?? Number.POSITIVE_INFINITY),
    lock: await current.redis.exists(`${queue.toKey(jobId)}:lock`),
  };
}

describe('a step job completed by its commit (decision 0056)', () => {
  it('ends as BullMQ completes a job, once per job, and the run goes on through the fetched jobs', async () => {
    harness = new Harness({ script, worker: { concurrency: 1 } });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'add things' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('done adding');

    // The reference: the last iteration finishes the run; its commit adds nothing, BullMQ completes it.
    const reference = await finishedAs(harness, stepJobId.iteration(runId, calls + 1));
    expect(reference).toEqual({
      state: 'completed',
      returnvalue: null,
      attemptsMade: 1,
      finished: true,
      lock: 0,
    });
    const inCommit = [
      ...Array.from({ length: calls }, (_unused, n) => stepJobId.iteration(runId, n + 1)),
      ...Array.from({ length: calls }, (_unused, n) => [
        stepJobId.tool(runId, n + 1, 0),
        stepJobId.tool(runId, n + 1, 1),
      ]).flat(),
    ];
    for (const jobId of inCommit) expect(await finishedAs(harness, jobId), jobId).toEqual(reference);

    // BullMQ's events: each job completed once (a second completion would add a second event, or fail).
    const queue = harness.engine.queues.queue(0);
    const events = await harness.redis.xrange(queue.toKey('events'), '-', '+');
    const completed = events
      .map(([, fields]) =>
        Object.fromEntries(
          fields.flatMap((_field, index, all) => (index % 2 ? [] : [[all[index], all[index + 1]]])),
        ),
      )
      .filter((event) => event.event === 'completed')
      .map((event) => event.jobId);
    const all = [...inCommit, stepJobId.iteration(runId, calls + 1)];
    expect(completed.filter((jobId) => all.includes(jobId)).sort()).toEqual([...all].sort());
    expect(await queue.getActiveCount()).toBe(0);
    expect(await queue.getFailedCount()).toBe(0);
  }, 60_000);
});
