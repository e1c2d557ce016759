import { afterEach, describe, expect, it } from 'vitest';
import { rawRequest } from '../api/raw-http.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type WorkerProcess } from '../helpers/harness.js';
import { metricsPortOf } from './scrape.js';

// A worker's metrics listener (issue 31, point 12), in a real worker process: a web page whose name was
// rebound to 127.0.0.1 reads it with its own Host (what the browser then sends, written here by hand); the
// listener now has the API's host guard, and an optional bearer token (telemetry.metrics.worker_token).

const token = 'worker-metrics-token-0123456789';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function startWorker(
  metrics: Record<string, unknown>,
  api: Record<string, unknown> = {},
): Promise<{ worker: WorkerProcess; url: string; port: number }> {
  harness = new Harness({
    script: { default: { text: 'ok' } },
    config: { telemetry: { metrics: { enabled: true, worker_port: 0, ...metrics } }, api },
  });
  const worker = harness.spawnWorker();
  await waitFor(() => metricsPortOf(worker.output()) !== undefined, 30_000, 'the worker metrics listener');
  const port = metricsPortOf(worker.output()) as number;
  return { worker, url: `http://127.0.0.1:${port}`, port };
}

function get(url: string, headers: Record<string, string>, path = '/metrics') {
  return rawRequest(url, { method: 'GET', path, headers });
}

describe("a worker's metrics listener", () => {
  it('refuses a rebound name as Host and a foreign Origin, naming the settings; loopback names pass', async () => {
    const { url, port } = await startWorker({});
    const refused: Record<string, string>[] = [
      { host: `evil.example:${port}` },
      { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
      { host: `127.0.0.1.evil.example:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      { host: `localhost:${port}`, origin: 'http://localhost:3000' },
    ];
    for (const headers of refused) {
      const answer = await get(url, headers);
      expect({ headers, status: answer.status }).toEqual({ headers, status: 403 });
      expect(answer.body).toMatch(/api\.allowed_(hosts|origins)/);
      expect(answer.body).toContain('telemetry.metrics.worker_token');
      expect(answer.body).not.toContain('ratchet_');
    }
    const accepted: Record<string, string>[] = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}` },
      { host: `[::1]:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
    ];
    for (const headers of accepted) {
      const answer = await get(url, headers);
      expect({ headers, status: answer.status }).toEqual({ headers, status: 200 });
      expect(answer.body).toContain('ratchet_runs_started_total');
    }
    // The guard holds on every path, not only /metrics.
    expect((await get(url, { host: `evil.example:${port}` }, '/')).status).toBe(403);
    expect((await get(url, { host: `localhost:${port}` }, '/')).status).toBe(404);
  }, 60_000);

  it('takes the names of api.allowed_hosts, as the API does', async () => {
    const { url, port } = await startWorker({}, { allowed_hosts: ['metrics.internal'] });
    expect((await get(url, { host: `metrics.internal:${port}` })).status).toBe(200);
    expect((await get(url, { host: `evil.example:${port}` })).status).toBe(403);
  }, 60_000);

  it('with worker_token, every scrape needs it: 401 without or with a wrong one, 200 with it', async () => {
    const { url, port } = await startWorker({ worker_token: token });
    const own = { host: `127.0.0.1:${port}` };
    const missing = await get(url, own);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect(missing.body).toContain('telemetry.metrics.worker_token');
    expect(missing.body).not.toContain('ratchet_');
    const wrong = await get(url, { ...own, authorization: 'Bearer not-the-token-0123456789' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain('ratchet_');
    const right = await get(url, { ...own, authorization: `Bearer ${token}` });
    expect(right.status).toBe(200);
    expect(right.body).toContain('ratchet_runs_started_total');
    // A rebinding page cannot know the token: without it a foreign Host gets nothing either.
    expect((await get(url, { host: `evil.example:${port}` })).status).toBe(401);
  }, 60_000);
});
