import { afterEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../bench/tcp-proxy.js';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { started } from '../helpers/generations.js';
import { Harness } from '../helpers/harness.js';
import { configThrough, redisTarget } from '../helpers/proxied-worker.js';

// A question answered between its write and the park of the step that asked it: the answer's wake finds the
// step's job still active (a step not parked is left alone), so without a recheck the step slept until its
// `worker.question_recheck_ms` with its answer there. The worker reaches Redis through a proxy that delays
// every chunk 250 ms each way, so the step's park (its journal mark, then BullMQ's move to the delayed set)
// comes more than a second after the question is in Redis: the test answers inside that window, on its own
// direct connection, and checks that the job was still active when it did.
let harness: Harness | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await proxy?.close();
  proxy = undefined;
});

const askScript: Script = {
  replies: [
    {
      text: 'one question first',
      tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } }],
    },
    { text: 'thanks' },
  ],
};

describe('a question answered before its step parked', () => {
  it('wakes the step at once, not at its recheck a few minutes later', async () => {
    const h = new Harness({ script: askScript, worker: { concurrency: 1, question_recheck_ms: 600_000 } });
    harness = h;
    proxy = await TcpProxy.start({ target: redisTarget(h), delayMs: 250 });
    const worker = h.spawnWorker({ configPath: configThrough(h, proxy.url, 'slow-redis.json') });
    await started(worker);
    const { runId, sessionId } = await h.engine.startRun({ input: 'paint it' });

    let questionId = '';
    let jobId = '';
    await waitFor(
      async () => {
        const [question] = await h.engine.listQuestions(sessionId);
        questionId = question?.id ?? '';
        jobId = question?.job_id ?? '';
        return question !== undefined;
      },
      60_000,
      'the question',
    );
    const stateWhenAnswered = await h.engine.queues.queue(0).getJobState(jobId);
    await h.engine.respond(sessionId, questionId, 'blue');
    // The race this test is about: the answer came while the asking step was still running.
    expect(stateWhenAnswered).toBe('active');

    const run = await h.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('thanks');
    const kinds = (await h.events(sessionId)).map((event) => event.kind);
    expect(kinds.filter((kind) => kind === 'ask_user')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'question_answered')).toHaveLength(1);
  }, 180_000);
});
