import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { freePort } from '../helpers/find-redis.js';
import { Harness, type WorkerProcess } from '../helpers/harness.js';
import { modelCallCounted } from '../helpers/journal-entry.js';
import { metricsPortOf, type Scrape, scrape } from './scrape.js';

const token = 'metrics-test-token-0123456789';
/** A tool name a hostile model makes up, different in every call: it must never become a label value. */
const madeUp = 'exfiltrate_a1b2c3d4e5';

const metricsConfig = {
  telemetry: { metrics: { enabled: true, worker_port: 0 } },
  pricing: { test: { input: 1, output: 2 } },
};

async function workerScrape(worker: WorkerProcess): Promise<Scrape> {
  await waitFor(() => metricsPortOf(worker.output()) !== undefined, 30_000, 'the worker metrics listener');
  return scrape(`http://127.0.0.1:${metricsPortOf(worker.output())}/metrics`);
}

describe('GET /metrics', () => {
  let api: ApiHarness | undefined;
  let harness: Harness | undefined;

  afterEach(async () => {
    await api?.close();
    await harness?.close();
    api = undefined;
    harness = undefined;
  });

  it('counts a known workload on the worker, and the deployment state on the API', async () => {
    api = await ApiHarness.start({
      // Each run: a reply asking for `add` and a tool the model made up, then the answer.
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'add', arguments: { a: 2, b: 3 } },
              { name: madeUp, arguments: {} },
            ],
            usage: { input_tokens: 11, output_tokens: 7 },
          },
          { text: 'done', usage: { input_tokens: 5, output_tokens: 3 } },
        ],
      },
      worker: false,
      api: { tokens: [token] },
      // One request per 300 ms: the second call of a run comes sooner, and waits.
      harness: { config: metricsConfig, provider: { rate_limit: { rpm: 1, window_ms: 300 } } },
    });
    const worker = api.harness.spawnWorker();
    const auth = { authorization: `Bearer ${token}` };
    const runs = 3;
    for (let index = 0; index < runs; index += 1) {
      const { runId } = await api.harness.engine.startRun({ input: `run ${index}` });
      expect((await api.harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    }

    const fromWorker = await workerScrape(worker);
    const agent = { agent: 'agent' };
    expect(fromWorker.value('ratchet_runs_started_total', agent)).toBe(runs);
    expect(fromWorker.value('ratchet_runs_finished_total', { ...agent, status: 'completed' })).toBe(runs);
    expect(fromWorker.histogram('ratchet_run_duration_seconds', agent).count).toBe(runs);
    const chat = { ...agent, provider: 'model', model: 'test', purpose: 'chat', error_type: '' };
    expect(fromWorker.histogram('gen_ai_client_operation_duration_seconds', chat).count).toBe(2 * runs);
    const usage = fromWorker.histogram('gen_ai_client_token_usage', { ...agent, token_type: 'input' });
    expect(usage).toEqual({ count: 2 * runs, sum: 16 * runs });
    expect(fromWorker.value('ratchet_model_tokens_total', { token_type: 'input' })).toBe(16 * runs);
    expect(fromWorker.value('ratchet_model_tokens_total', { token_type: 'output' })).toBe(10 * runs);
    // USD per million tokens: (16 input × 1 + 10 output × 2) per run.
    expect(fromWorker.value('ratchet_model_cost_usd_total', agent)).toBeCloseTo((36 * runs) / 1e6, 12);
    expect(
      fromWorker.histogram('ratchet_tool_call_duration_seconds', { tool: 'add', outcome: 'ok' }).count,
    ).toBe(runs);
    const unknown = { tool: '(unknown)', outcome: 'error' };
    expect(fromWorker.histogram('ratchet_tool_call_duration_seconds', unknown).count).toBe(runs);
    expect(
      fromWorker.histogram('ratchet_step_duration_seconds', { kind: 'iteration', outcome: 'done' }).count,
    ).toBe(2 * runs);
    expect(
      fromWorker.histogram('ratchet_step_duration_seconds', { kind: 'tool', outcome: 'done' }).count,
    ).toBe(2 * runs);
    expect(fromWorker.value('ratchet_model_calls_repeated_total')).toBe(0);
    // Every step job started once, none added delayed: each waited in the queue once.
    expect(fromWorker.histogram('ratchet_step_queue_wait_seconds', { shard: '0' }).count).toBe(4 * runs);
    expect(fromWorker.value('ratchet_rate_limit_waits_total', { provider: 'model' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(fromWorker.value('ratchet_rate_limit_wait_seconds_total', { provider: 'model' })).toBeGreaterThan(
      0,
    );
    // Bounded labels: no name the model made up, no run or session id.
    expect(fromWorker.text).not.toContain(madeUp);
    expect(fromWorker.labelValues().some((value) => /^(run|ses)_/.test(value))).toBe(false);
    // Only /metrics is served there.
    const port = metricsPortOf(worker.output());
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);

    // The API: behind its token, the state of the deployment.
    expect((await fetch(`${api.url}/metrics`)).status).toBe(401);
    const { sessionId } = await api.harness.engine.startRun({ input: 'one more' });
    const follower = new AbortController();
    const stream = await fetch(`${api.url}/v1/sessions/${sessionId}/events`, {
      headers: { ...auth, accept: 'text/event-stream' },
      signal: follower.signal,
    });
    expect(stream.status).toBe(200);
    try {
      await waitFor(
        async () =>
          (await scrape(`${api?.url}/metrics`, auth)).value('ratchet_runs', { status: 'completed' }) ===
          runs + 1,
        30_000,
        'the fourth run to complete',
      );
      const fromApi = await scrape(`${api.url}/metrics`, auth);
      expect(fromApi.value('ratchet_sse_followers')).toBe(1);
      expect(fromApi.value('ratchet_workers', { state: 'alive' })).toBe(1);
      expect(fromApi.value('ratchet_workers', { state: 'dead' })).toBe(0);
      expect(fromApi.family('ratchet_queue_jobs')?.metrics.length).toBeGreaterThan(0);
      expect(fromApi.value('ratchet_queue_jobs', { shard: '0', state: 'active' })).toBe(0);
      expect(fromApi.value('ratchet_runs', { status: 'waiting_input' })).toBe(0);
    } finally {
      follower.abort();
    }
    await waitFor(
      async () => (await scrape(`${api?.url}/metrics`, auth)).value('ratchet_sse_followers') === 0,
      30_000,
      'the follower to leave',
    );
    expect((await worker.stop()).code).toBe(0);
  }, 120_000);

  it('counts the takeover of a worker killed mid-model-call, and the model call it repeated', async () => {
    harness = new Harness({
      script: { replies: [{ text: 'slow answer', delay_ms: 3_000 }] },
      config: metricsConfig,
    });
    const workers = [harness.spawnWorker(), harness.spawnWorker()];
    const { runId, sessionId } = await harness.engine.startRun({ input: 'take your time' });
    await waitFor(() => (harness?.modelCalls().length ?? 0) === 1, 30_000, 'the model call');
    // Counted in the journal too: how the takeover knows the call it makes again is a repeat.
    await waitFor(
      () => modelCallCounted(harness as Harness, sessionId, runId, 1),
      30_000,
      'the model call counted',
    );
    const doomed = workers.find(
      (worker) => worker.child.pid === harness?.modelCalls()[0]?.pid,
    ) as WorkerProcess;
    const survivor = workers.find((worker) => worker !== doomed) as WorkerProcess;
    await doomed.kill();
    expect((await waitForExit(doomed, 10_000)).signal).toBe('SIGKILL');
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 45_000 })).status).toBe('completed');
    const fromSurvivor = await workerScrape(survivor);
    expect(fromSurvivor.value('ratchet_step_takeovers_total')).toBeGreaterThanOrEqual(1);
    expect(fromSurvivor.value('ratchet_dead_workers_noticed_total')).toBe(1);
    expect(
      fromSurvivor.value('ratchet_model_calls_repeated_total', {
        cause: 'takeover',
        agent: 'agent',
        model: 'test',
      }),
    ).toBe(1);
    expect(fromSurvivor.value('ratchet_runs_finished_total', { status: 'completed' })).toBe(1);
    expect((await survivor.stop()).code).toBe(0);
  }, 120_000);

  it("with metrics off, the API's /metrics is a 404 that says how to turn them on", async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } }, worker: false });
    const answer = await api.request('GET', '/metrics');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toEqual({
      code: 'not_found',
      message:
        'metrics are off: set telemetry.metrics.enabled: true in the config and restart; the API then serves them here, and each worker on telemetry.metrics.worker_port (9464 by default)',
      details: { resource: 'metrics' },
    });
    // Any other unknown path is still the router's own 404.
    expect((await api.request('GET', '/metrics/x')).body.error.details).not.toEqual({ resource: 'metrics' });
  });

  it('refuses to start a second worker on a metrics port that is taken, naming the setting', async () => {
    const port = await freePort();
    harness = new Harness({
      script: { default: { text: 'ok' } },
      config: { telemetry: { metrics: { enabled: true, worker_port: port } } },
    });
    const first = harness.spawnWorker();
    await waitFor(() => metricsPortOf(first.output()) === port, 30_000, 'the first worker listening');
    const second = harness.spawnWorker();
    const exit = await waitForExit(second, 30_000);
    expect(exit.code, second.output()).toBe(2);
    expect(second.output()).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(second.output()).toContain('worker_port');
    // The first one serves on.
    expect(
      (await scrape(`http://127.0.0.1:${port}/metrics`)).family('ratchet_runs_started_total'),
    ).toBeDefined();
    expect((await first.stop()).code).toBe(0);
  }, 60_000);
});
