import { afterEach, describe, expect, it } from 'vitest';
import { recordKinds } from '../../src/schemas/record-kinds.js';
import '../../src/workflows/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('a step job written by a newer Ratchet', () => {
  it('is retried (a worker of that version may take it), while one that does not parse is dropped at once', async () => {
    harness = new Harness({ script: { default: { text: 'done' } } });
    await harness.startWorker();
    const queue = harness.engine.queues.queue(0);
    const place = { session_id: 'ses_x', run_id: 'run_x', agent: 'agent', chat_id: 'main', iteration: 1 };
    const options = { attempts: 3, backoff: { type: 'fixed', delay: 10 } };
    const newerVersion = (recordKinds().find((kind) => kind.name === 'job.iteration')?.version ?? 0) + 1;
    const newer = await queue.add(
      'iteration',
      // One version above the one this Ratchet writes.
      { ...place, v: newerVersion, previous_calls: 0, added: 'later' },
      {
        ...options,
        jobId: 'job-newer',
      },
    );
    const broken = await queue.add(
      'iteration',
      { ...place, v: 1, previous_calls: 'none' },
      {
        ...options,
        jobId: 'job-broken',
      },
    );
    await waitFor(
      async () =>
        (await queue.getJobState(newer.id ?? '')) === 'failed' &&
        (await queue.getJobState(broken.id ?? '')) === 'failed',
      30_000,
      'both jobs to fail',
    );
    const newerJob = await queue.getJob(newer.id ?? '');
    expect(newerJob?.attemptsMade).toBe(3);
    expect(newerJob?.failedReason).toMatch(
      new RegExp(`version ${newerVersion} of record kind "job.iteration", written by a newer Ratchet`),
    );
    const brokenJob = await queue.getJob(broken.id ?? '');
    expect(brokenJob?.attemptsMade).toBe(1);
    expect(brokenJob?.failedReason).toMatch(/does not match its schema/);
  });
});
