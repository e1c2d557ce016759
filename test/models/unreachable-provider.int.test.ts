import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { freePort } from '../helpers/find-redis.js';

// A provider whose endpoint cannot be reached (nothing listens at base_url: a local model server not started,
// a typo in the port): the run fails soon, saying that the endpoint could not be reached and naming base_url,
// not "the connection broke" after the backoff meant for a reply cut mid-stream (issue 31, first hour 6).
// Real processes: the API, a worker process with the config's default retry settings, a closed port.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('a provider endpoint that cannot be reached', () => {
  it('fails the run within seconds, naming the provider and base_url', async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    api = await ApiHarness.start({
      script: { default: { text: 'unused' } },
      worker: false,
      harness: {
        providerEntry: { name: 'model', kind: 'openai_compatible', model: 'local-model', base_url: baseUrl },
        // What a user's config has: no test shortcuts for retries.
        worker: { step_attempts: 5, backoff_base_ms: 1_000, backoff_max_ms: 60_000 },
      },
    });
    const worker = api.harness.spawnWorker();
    // Measured from the submit (the worker process starts meanwhile): 16.5 s before, 4 s now, of which the
    // retries took about 1 s.
    const started = Date.now();
    const { runId, sessionId } = await api.submitRun('hello');
    const waited = await api.request('GET', `/v1/runs/${runId}/wait?timeout_s=60`);
    const elapsedMs = Date.now() - started;
    expect(waited.body.status).toBe('failed');
    expect(waited.body.error).toEqual({
      code: 'model_network_error',
      message:
        `openai_compatible provider "model": cannot reach its base_url ${baseUrl}: connection refused: ` +
        'nothing listens there (ECONNREFUSED); check that the server is running there and that base_url is right',
    });
    // Three quick attempts (two retries, 0.5 s and 1 s apart at most), not five over ~16 s: the run fails
    // within seconds (measured: 16.5 s before, with the same settings).
    const events = await api.engine.readEvents(sessionId);
    const retried = events.filter((event) => event.kind === 'error');
    expect(
      retried.map((event) => (event.data as { retry_in_ms: number | null }).retry_in_ms !== null),
    ).toEqual([true, true, false]);
    // From the first refused attempt to the run's failure: the two backoffs (at most 0.5 s + 1 s) and the
    // queue's own delay.
    const firstMs = Date.parse(retried[0]?.time ?? '');
    const lastMs = Date.parse(retried[2]?.time ?? '');
    expect(lastMs - firstMs).toBeLessThan(3_000);
    expect(elapsedMs).toBeLessThan(15_000);
    await worker.stop();
  }, 90_000);
});
