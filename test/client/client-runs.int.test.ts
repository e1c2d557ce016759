import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient, type RunListItem } from '../../src/client/index.js';
import type { Script } from '../../src/models/index.js';
import { ApiHarness, type ApiHarnessOptions } from '../api/api-harness.js';

// ratchet/client's run index, inspection, retry and fork methods against the real API with a worker on the
// real Redis (scripted model). Each harness has its own key prefix, so the index holds only this test's runs.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(options: ApiHarnessOptions) {
  api = await ApiHarness.start(options);
  return { api, client: new RatchetClient({ baseUrl: api.url }) };
}

const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });
const fiveIterations: Script = { replies: [add(1, 1), add(2, 2), add(3, 3), add(4, 4), { text: 'done' }] };
/** The same, with the model's third request failing with a 503 on each of the step's attempts. */
const outage: Script = {
  replies: [
    add(1, 1),
    add(2, 2),
    { ...add(3, 3), fail: [1, 2, 3].map(() => ({ kind: 'server_error' as const, status: 503 })) },
    add(4, 4),
    { text: 'done' },
  ],
};
const unknownRun = 'run_0000000000000000_0000000000';

/** The error a call rejects with (failing the test when it resolves). */
async function refusal(call: Promise<unknown>): Promise<RatchetApiError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RatchetApiError);
  return error as RatchetApiError;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('RatchetClient: finding runs and sessions', () => {
  it('list pages with a cursor; eachRun follows every page; filters, summary, sessions and eachSession', async () => {
    const { client } = await start({
      script: {
        rules: [{ when: { contains: 'fail' }, reply: { text: 'x', fail: [{ kind: 'auth' }] } }],
        default: { text: 'ok' },
      },
    });
    const submitted: string[] = [];
    const sessionIds: string[] = [];
    const before = new Date(Date.now() - 1000);
    for (const input of ['one', 'two', 'three', 'four', 'fail five']) {
      const accepted = await client.submit({ input });
      submitted.push(accepted.run_id);
      sessionIds.push(accepted.session_id);
      await client.wait(accepted.run_id, { timeoutS: 30 });
    }
    const newestFirst = [...submitted].reverse();

    const first = await client.list({ limit: 2 });
    expect(first.runs.map((run) => run.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await client.list({ limit: 2, cursor: first.next_cursor ?? '' });
    expect(second.runs.map((run) => run.id)).toEqual(newestFirst.slice(2, 4));

    // Three pages of two: each run once, newest first, and the loop fetched page after page.
    const all: RunListItem[] = await collect(client.eachRun({ limit: 2 }));
    expect(all.map((run) => run.id)).toEqual(newestFirst);
    expect(all[0]).toMatchObject({ status: 'failed', agent: 'agent', root_run_id: null });
    expect(all.slice(1).every((run) => run.status === 'completed')).toBe(true);
    // Leaving the loop early stops fetching.
    for await (const run of client.eachRun({ limit: 1 })) {
      expect(run.id).toBe(newestFirst[0]);
      break;
    }

    expect((await client.list({ status: 'failed' })).runs.map((run) => run.id)).toEqual([submitted[4]]);
    const several = await client.list({ status: ['failed', 'completed'], limit: 500 });
    expect(several.runs).toHaveLength(5);
    expect(several.next_cursor).toBeNull();
    expect((await client.list({ session_id: sessionIds[1] })).runs.map((run) => run.id)).toEqual([
      submitted[1],
    ]);
    expect((await client.list({ agent: 'nobody' })).runs).toEqual([]);
    expect((await client.list({ root: false })).runs).toEqual([]);
    expect(
      (await client.list({ root: true, since: before, until: new Date(Date.now() + 60_000) })).runs,
    ).toHaveLength(5);
    expect((await client.list({ since: new Date(Date.now() + 60_000) })).runs).toEqual([]);
    expect((await client.list({ q: submitted[2]?.slice(0, 22) })).runs.map((run) => run.id)).toEqual([
      submitted[2],
    ]);

    const summary = await client.summary();
    expect(summary).toMatchObject({ total: 5, since: null });
    expect(summary.counts).toMatchObject({ completed: 4, failed: 1, running: 0 });
    expect((await client.summary({ since: new Date(Date.now() + 60_000) })).total).toBe(0);

    const sessionPage = await client.sessions({ limit: 2 });
    expect(sessionPage.sessions).toHaveLength(2);
    expect(sessionPage.next_cursor).toEqual(expect.any(String));
    const sessions = await collect(client.eachSession({ limit: 2, status: 'idle' }));
    expect(sessions.map((session) => session.id).sort()).toEqual([...sessionIds].sort());
    expect(sessions[0]).toMatchObject({ agent: 'agent', status: 'idle', active_run_id: null });
  });

  it('a filter the server refuses is a typed 400 naming the parameter', async () => {
    const { client } = await start({ script: { default: { text: 'ok' } }, worker: false });
    const tooMany = await refusal(client.list({ limit: 501 }));
    expect(tooMany).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(tooMany.issues).toEqual([
      { location: 'querystring', path: 'limit', message: 'must be at most 500' },
    ]);
    const badCursor = await refusal(client.list({ cursor: 'not-a-cursor' }));
    expect(badCursor.issues.map((issue) => issue.path)).toEqual(['cursor']);
    const badStatus = await refusal(client.list({ status: 'finished' as unknown as 'failed' }));
    expect(badStatus.issues[0]).toMatchObject({ path: 'status' });
    const badSession = await refusal(client.sessions({ status: 'busy' as unknown as 'idle' }));
    expect(badSession.issues[0]).toMatchObject({ path: 'status', message: 'must be idle or active' });
  });
});

describe('RatchetClient: inspecting runs and the system', () => {
  it('tree, steps with paging (steps and eachStep), system; 404 for an unknown run', async () => {
    const { client } = await start({ script: fiveIterations });
    const { run_id: runId } = await client.submit({ input: 'count' });
    expect((await client.wait(runId, { timeoutS: 30 })).status).toBe('completed');

    const tree = await client.tree(runId);
    expect(tree).toMatchObject({ run_id: runId, truncated: false });
    expect(tree.runs).toEqual([
      expect.objectContaining({
        run_id: runId,
        depth: 0,
        status: 'completed',
        iterations: 5,
        origin: null,
        retried_by: null,
        children: 0,
      }),
    ]);

    const page = await client.steps(runId, { from: 2, limit: 2, cut_at: 3 });
    expect(page).toMatchObject({ run_id: runId, status: 'completed', iterations: 5, next_from: 4 });
    expect(page.steps.map((step) => step.iteration)).toEqual([2, 3]);
    const call = page.steps[0]?.tool_calls[0];
    expect(call).toMatchObject({ name: 'add', ledger: 'done' });
    expect(call?.arguments).toMatchObject({ text: '{"a', cut: true });

    const steps = await collect(client.eachStep(runId, { limit: 2 }));
    expect(steps.map((step) => [step.iteration, step.decision])).toEqual([
      [1, 'tools'],
      [2, 'tools'],
      [3, 'tools'],
      [4, 'tools'],
      [5, 'final'],
    ]);

    const system = await client.system();
    expect(system.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(system.workers.some((worker) => worker.alive)).toBe(true);
    expect(system.queues.length).toBeGreaterThan(0);
    expect(system.runs_by_status.completed).toBe(1);

    // One call at a time: a second call made before the first is awaited rejects with no handler yet (an
    // unhandled rejection, which a CI run reported).
    for (const call of [() => client.tree(unknownRun), () => client.steps(unknownRun)]) {
      expect(await refusal(call())).toMatchObject({ status: 404, code: 'not_found' });
    }
    const badPage = await refusal(client.steps(runId, { limit: 101 }));
    expect(badPage.issues.map((issue) => issue.path)).toEqual(['limit']);
  });
});

describe('RatchetClient: retry and fork', () => {
  it('retries a run a provider outage failed; a second retry is a typed 409 run_not_retryable', async () => {
    const { api, client } = await start({ script: outage, worker: false });
    const first = await api.harness.startWorker();
    const { run_id: runId, session_id: sessionId } = await client.submit({ input: 'count up' });
    const failed = await client.wait(runId, { timeoutS: 60 });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'model_server_error' }, iterations: 2 });
    await first.close(2000);
    // The outage is over: a worker started now reads the script without it.
    writeFileSync(join(api.harness.dir, 'script.json'), JSON.stringify(fiveIterations));
    await api.harness.startWorker();

    const retry = await client.retry(runId, { max_iterations: 10 });
    expect(retry.session_id).toBe(sessionId);
    const done = await client.wait(retry.run_id, { timeoutS: 60 });
    expect(done).toMatchObject({
      status: 'completed',
      result: 'done',
      iterations: 5,
      origin: { kind: 'retry', run_id: runId, session_id: sessionId, at_iteration: null },
    });
    expect((await client.get(runId)).retried_by).toBe(retry.run_id);
    // The retry asked only for the replies the outage kept from the run: the third to the fifth.
    const positions = (api.harness.modelCalls() as unknown as { run_id: string; position: number }[])
      .filter((call) => call.run_id === retry.run_id)
      .map((call) => call.position);
    expect(positions).toEqual([2, 3, 4]);

    const again = await refusal(client.retry(runId));
    expect(again).toMatchObject({ status: 409, code: 'conflict' });
    expect(again.details).toMatchObject({
      reason: 'run_not_retryable',
      status: 'failed',
      retry_run_id: retry.run_id,
    });
    const completed = await refusal(client.retry(retry.run_id));
    expect(completed.details).toMatchObject({ reason: 'run_not_retryable', status: 'completed' });
    expect(await refusal(client.retry(unknownRun))).toMatchObject({ status: 404, code: 'not_found' });
    const tooMany = await refusal(client.retry(runId, { max_iterations: 0 }));
    expect(tooMany).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(tooMany.issues[0]).toMatchObject({ location: 'body', path: 'max_iterations' });
  });

  it('forks a run at an iteration with a new message; a fork point not recorded is a typed 400', async () => {
    const { client } = await start({ script: fiveIterations });
    const { run_id: runId, session_id: sessionId } = await client.submit({ input: 'count' });
    await client.wait(runId, { timeoutS: 30 });

    const fork = await client.fork(runId, { at_iteration: 2, input: 'and now?', metadata: { why: 'test' } });
    expect(fork.session_id).not.toBe(sessionId);
    const done = await client.wait(fork.run_id, { timeoutS: 30 });
    expect(done).toMatchObject({
      status: 'completed',
      iterations: 3,
      origin: { kind: 'fork', run_id: runId, session_id: sessionId, at_iteration: 2 },
    });
    expect((await client.session(fork.session_id)).metadata).toEqual({ why: 'test' });
    // The index lists the fork beside the run it came from, and its tree names the origin.
    expect((await client.list()).runs.map((run) => run.id)).toEqual([fork.run_id, runId]);
    expect((await client.tree(fork.run_id)).runs[0]?.origin).toMatchObject({ kind: 'fork', run_id: runId });

    const beyond = await refusal(client.fork(runId, { at_iteration: 6 }));
    expect(beyond).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(beyond.issues).toEqual([
      {
        location: 'body',
        path: 'at_iteration',
        message: expect.stringContaining('recorded iterations are 1 to 5'),
      },
    ]);
    expect(await refusal(client.fork(runId, { at_iteration: 2, agent: 'nobody' }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(await refusal(client.fork(unknownRun, { at_iteration: 1 }))).toMatchObject({ status: 404 });
  });
});
