import { afterEach, describe, expect, it } from 'vitest';
import { engineFromConfig } from '../../src/engine/index.js';
import { silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

// POST /v1/runs/:id/retry and /v1/runs/:id/fork through real HTTP (decision 0022).
let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });
const fiveIterations: Script = { replies: [add(1, 1), add(2, 2), add(3, 3), add(4, 4), { text: 'done' }] };
const unknownRun = 'run_0000000000000000_0000000000';

async function finished(harness: ApiHarness, runId: string) {
  const waited = await harness.request('GET', `/v1/runs/${runId}/wait?timeout_s=30`);
  expect(waited.status).toBe(200);
  return waited.body;
}

describe('retry and fork over HTTP', () => {
  it('a run failed on max_iterations is retried with a higher max_iterations within the agent limit', async () => {
    api = await ApiHarness.start({ script: fiveIterations, harness: { maxIterations: 8 } });
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'count', max_iterations: 3 } });
    const failed = await finished(api, submitted.body.run_id);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('max_iterations');

    // Its last reply asked for a tool that never ran: a fork there would hand the model a call without result.
    const unanswered = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 3 },
    });
    expect(unanswered.status).toBe(400);
    expect(unanswered.body.error.details.issues).toEqual([
      {
        location: 'body',
        path: 'at_iteration',
        message: expect.stringContaining('results are not all recorded'),
      },
    ]);

    const above = await api.request('POST', `/v1/runs/${submitted.body.run_id}/retry`, {
      body: { max_iterations: 9 },
    });
    expect(above.status).toBe(400);
    expect(above.body.error.code).toBe('invalid_request');
    expect(above.body.error.details.issues).toEqual([
      {
        location: 'body',
        path: 'max_iterations',
        message: expect.stringContaining('options.max_iterations: 8'),
      },
    ]);
    expect(above.body.error.details.limit).toBe(8);

    const retried = await api.request('POST', `/v1/runs/${submitted.body.run_id}/retry`, {
      body: { max_iterations: 6, timeout_s: 60 },
    });
    expect(retried.status).toBe(202);
    expect(retried.body.session_id).toBe(submitted.body.session_id);
    const done = await finished(api, retried.body.run_id);
    expect(done).toMatchObject({
      status: 'completed',
      result: 'done',
      iterations: 5,
      max_iterations: 6,
      origin: { kind: 'retry', run_id: submitted.body.run_id, at_iteration: null },
      retried_by: null,
    });
    expect(Date.parse(done.deadline_at)).toBeGreaterThan(Date.now());
    // The third reply's call never ran: the model is told so, and nothing recorded is asked again.
    const chat = await api.request('GET', `/v1/sessions/${submitted.body.session_id}/messages`);
    const results = chat.body.messages.filter((message: { role: string }) => message.role === 'tool');
    expect(results).toHaveLength(4);
    expect(results[2].parts[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('it did not run'),
    });
    const original = await api.request('GET', `/v1/runs/${submitted.body.run_id}`);
    expect(original.body).toMatchObject({ status: 'failed', retried_by: retried.body.run_id });

    // The tree names the lineage both ways.
    const retryTree = await api.request('GET', `/v1/runs/${retried.body.run_id}/tree`);
    expect(retryTree.body.runs[0]).toMatchObject({
      origin: { kind: 'retry', run_id: submitted.body.run_id, at_iteration: null },
      retried_by: null,
    });
    const originalTree = await api.request('GET', `/v1/runs/${submitted.body.run_id}/tree`);
    expect(originalTree.body.runs[0]).toMatchObject({ origin: null, retried_by: retried.body.run_id });

    const again = await api.request('POST', `/v1/runs/${submitted.body.run_id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error.details).toMatchObject({
      reason: 'run_not_retryable',
      status: 'failed',
      retry_run_id: retried.body.run_id,
    });
  });

  it('a completed or running run is not retried (409 run_not_retryable); an unknown one is 404', async () => {
    api = await ApiHarness.start({
      script: {
        rules: [{ when: { contains: 'slow' }, reply: { text: 'late', delay_ms: 60_000 } }],
        default: { text: 'ok' },
      },
    });
    const quick = await api.request('POST', '/v1/runs', { body: { input: 'quick' } });
    await finished(api, quick.body.run_id);
    const completed = await api.request('POST', `/v1/runs/${quick.body.run_id}/retry`, { body: {} });
    expect(completed.status).toBe(409);
    expect(completed.body.error).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('only a failed or cancelled run can be retried'),
      details: { reason: 'run_not_retryable', status: 'completed', retry_run_id: null },
    });

    const slow = await api.request('POST', '/v1/runs', { body: { input: 'slow' } });
    const running = await api.request('POST', `/v1/runs/${slow.body.run_id}/retry`);
    expect(running.status).toBe(409);
    expect(running.body.error.details.reason).toBe('run_not_retryable');
    expect(['queued', 'running']).toContain(running.body.error.details.status);
    await api.request('POST', `/v1/runs/${slow.body.run_id}/cancel`);

    const unknown = await api.request('POST', `/v1/runs/${unknownRun}/retry`);
    expect(unknown.status).toBe(404);
    const unknownFork = await api.request('POST', `/v1/runs/${unknownRun}/fork`, {
      body: { at_iteration: 1 },
    });
    expect(unknownFork.status).toBe(404);
  });

  it('a fork at an iteration the run did not record is 400 naming at_iteration; a bad body names its field', async () => {
    api = await ApiHarness.start({ script: fiveIterations });
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'count' } });
    await finished(api, submitted.body.run_id);
    const beyond = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 6 },
    });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error.details.issues).toEqual([
      {
        location: 'body',
        path: 'at_iteration',
        message: expect.stringContaining('recorded iterations are 1 to 5'),
      },
    ]);
    const zero = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 0 },
    });
    expect(zero.status).toBe(400);
    expect(zero.body.error.details.issues[0].path).toBe('at_iteration');
    const extra = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 2, at: 2 },
    });
    expect(extra.body.error.details.issues).toEqual([
      { location: 'body', path: 'at', message: 'unknown field' },
    ]);
    const noAgent = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 2, agent: 'nobody' },
    });
    expect(noAgent.status).toBe(404);

    const forked = await api.request('POST', `/v1/runs/${submitted.body.run_id}/fork`, {
      body: { at_iteration: 2, input: 'and now?' },
    });
    expect(forked.status).toBe(202);
    expect(forked.body.session_id).not.toBe(submitted.body.session_id);
    const done = await finished(api, forked.body.run_id);
    expect(done).toMatchObject({
      status: 'completed',
      iterations: 3,
      origin: {
        kind: 'fork',
        run_id: submitted.body.run_id,
        session_id: submitted.body.session_id,
        at_iteration: 2,
      },
    });
  });

  it('a run whose session moved on is not retried; the index lists a retry beside the run it continues', async () => {
    api = await ApiHarness.start({
      script: {
        rules: [
          {
            when: { contains: 'slow' },
            reply: { tool_calls: [{ name: 'slow_echo', arguments: { text: 'late', delay_ms: 60_000 } }] },
          },
          { when: { contains: 'may or may not' }, reply: { text: 'done' } },
        ],
        replies: [add(1, 1), add(2, 2)],
      },
      harness: { maxIterations: 2 },
    });
    const first = await api.request('POST', '/v1/runs', { body: { input: 'count' } });
    expect((await finished(api, first.body.run_id)).error.code).toBe('max_iterations');
    // Another run on the session: its entries follow the failed run's in the chat, so continuing that run
    // would answer an old question (while it runs, and after).
    const slow = await api.request('POST', `/v1/sessions/${first.body.session_id}/messages`, {
      body: { text: 'slow' },
    });
    const slowCall = async () =>
      (await api?.harness.events(first.body.session_id))?.some(
        (event) => event.kind === 'tool_call_start' && event.run_id === slow.body.run_id,
      ) ?? false;
    await waitFor(slowCall, 30_000, 'the slow call to start');
    const busy = await api.request('POST', `/v1/runs/${first.body.run_id}/retry`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.details.reason).toBe('run_not_retryable');
    await api.request('POST', `/v1/runs/${slow.body.run_id}/cancel`);
    const movedOn = await api.request('POST', `/v1/runs/${first.body.run_id}/retry`);
    expect(movedOn.status).toBe(409);
    expect(movedOn.body.error.details).toMatchObject({ reason: 'run_not_retryable', status: 'failed' });
    expect(movedOn.body.error.message).toContain('is not the latest');

    const retried = await api.request('POST', `/v1/runs/${slow.body.run_id}/retry`);
    expect(retried.status).toBe(202);
    await finished(api, retried.body.run_id);
    const listed = await api.request('GET', `/v1/runs?session_id=${first.body.session_id}`);
    expect(listed.status).toBe(200);
    expect(
      listed.body.runs.map((run: { id: string; status: string }) => [run.id, run.status]).sort(),
    ).toEqual(
      [
        [first.body.run_id, 'failed'],
        [slow.body.run_id, 'cancelled'],
        [retried.body.run_id, 'completed'],
      ].sort(),
    );
  });

  it('retries racing from two API processes: one retry and one step, every other refused', async () => {
    api = await ApiHarness.start({ script: fiveIterations, harness: { maxIterations: 8 } });
    const harness = api.harness;
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'count', max_iterations: 2 } });
    expect((await finished(api, submitted.body.run_id)).status).toBe('failed');
    // A second engine is what a second API process has: a writer (and its connection) of its own.
    const other = engineFromConfig({
      config: harness.loaded.config,
      redis: harness.redis,
      logger: silentLogger(),
    });
    try {
      const tries = Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? harness.engine : other).retryRun(submitted.body.run_id, { maxIterations: 8 }),
      );
      const outcomes = await Promise.allSettled(tries);
      const accepted = outcomes.flatMap((outcome) =>
        outcome.status === 'fulfilled' ? [outcome.value.runId] : [],
      );
      const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
      expect(accepted).toHaveLength(1);
      for (const refusal of refusals)
        expect(refusal).toMatchObject({ code: expect.stringMatching(/run_not_retryable|session_busy/) });
      const done = await finished(api, accepted[0] ?? '');
      expect(done).toMatchObject({ status: 'completed', result: 'done', iterations: 5 });
      // One run besides the original in the session, and the only steps are the two runs' own.
      const runs = await harness.redis.smembers(
        runKeys(harness.engine.space, submitted.body.session_id, 'x').runs,
      );
      expect(runs.sort()).toEqual([submitted.body.run_id, accepted[0]].sort());
      const jobs = await harness.engine.queues
        .queue(runKeys(harness.engine.space, submitted.body.session_id, 'x').shard)
        .getJobs();
      expect(new Set(jobs.map((job) => job.data.run_id))).toEqual(
        new Set([submitted.body.run_id, accepted[0]]),
      );
    } finally {
      await other.close();
    }
  });

  it('the OpenAPI document lists both routes with their bodies', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const document = await api.request('GET', '/openapi.json');
    expect(document.status).toBe(200);
    const paths = document.body.paths;
    expect(Object.keys(paths['/v1/runs/{id}/retry'])).toEqual(['post']);
    expect(Object.keys(paths['/v1/runs/{id}/fork'])).toEqual(['post']);
    const forkBody = paths['/v1/runs/{id}/fork'].post.requestBody.content['application/json'].schema;
    expect(forkBody.required).toEqual(['at_iteration']);
    expect(Object.keys(forkBody.properties)).toEqual(
      expect.arrayContaining(['at_iteration', 'input', 'agent', 'budget', 'timeout_s', 'max_iterations']),
    );
  });
});
