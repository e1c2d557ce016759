import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiProcess, startApi } from '../../src/cli/start-api.js';
import { silentLogger } from '../../src/log/index.js';
import { rawRequest } from '../api/raw-http.js';
import { altToolbox, testToolbox } from '../fixtures/test-tools.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness } from '../helpers/harness.js';
import { runCli } from './cli-fixture.js';

// The CLI against an API whose Redis is down (issue 31, first hour 6): the API answers 503 "temporarily
// unavailable" (it names no Redis error to its clients), and its public /readyz says Redis is unreachable;
// the CLI says that, instead of "the service is temporarily unavailable". Real processes: a redis-server
// this test starts and stops by pid, the real API stack, and `ratchet` as a child process.

let redis: OwnRedis | undefined;
let harness: Harness | undefined;
let api: ApiProcess | undefined;
afterEach(async () => {
  await api?.close();
  await harness?.close();
  await redis?.stop();
  api = undefined;
  harness = undefined;
  redis = undefined;
});

describe('the CLI while the API cannot reach Redis', () => {
  it('says Redis is unreachable, naming what /readyz reports', async () => {
    redis = await startRedisServer();
    harness = new Harness({ script: { replies: [{ text: 'done' }] }, redisUrl: redis.url });
    api = await startApi({
      loaded: harness.loaded,
      toolboxes: [testToolbox(), altToolbox()],
      logger: silentLogger(),
      host: '127.0.0.1',
      port: 0,
    });
    const submitted = await rawRequest(api.url, {
      method: 'POST',
      path: '/v1/runs',
      body: JSON.stringify({ input: 'go' }),
    });
    expect(submitted.status).toBe(202);
    const runId = submitted.json.run_id as string;

    const stopped = redis;
    const exited = new Promise((resolve) => stopped.process.once('exit', resolve));
    stopped.process.kill('SIGTERM');
    await exited;
    try {
      // What the API itself answers: the generic 503, and the diagnosis on /readyz.
      const direct = await rawRequest(api.url, { method: 'GET', path: `/v1/runs/${runId}` });
      expect(direct.status).toBe(503);
      expect(direct.json.error.message).toBe('the service is temporarily unavailable; retry later');

      const status = await runCli(['status', runId, '--url', api.url]);
      expect(status.code).toBe(1);
      expect(status.stderr).toBe(
        `unavailable: Redis is unreachable from the API at ${api.url} (its /readyz reports redis: unreachable, ` +
          "config: ok): start Redis, or check the API's redis.url, then retry\n",
      );
    } finally {
      // Back on the same port, whatever happened (the harness's connections wait for it to close).
      redis = await startRedisServer({ port: stopped.port, dir: stopped.dir });
      const stopBack = redis.stop;
      redis.stop = async () => {
        await stopBack();
        rmSync(stopped.dir, { recursive: true, force: true });
      };
    }
    await waitFor(
      async () => (await rawRequest(api?.url ?? '', { method: 'GET', path: '/readyz' })).status === 200,
      15_000,
      'the API ready again',
    );
    // A Redis started empty: the run is gone, and the CLI says that, not that Redis is away.
    const again = await runCli(['status', runId, '--url', api.url]);
    expect(again.stderr).toBe(`not_found: unknown run ${runId}\n`);
  }, 60_000);
});
