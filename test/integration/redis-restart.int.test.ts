import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { expectSameAsReference, referenceRun, waitFor } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness } from '../helpers/harness.js';

let redis: OwnRedis | undefined;
let harness: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const script: Script = {
  replies: [
    { text: 'one', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay_ms: 800 },
    {
      text: 'two',
      tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 300 } }],
      delay_ms: 300,
    },
    { text: 'done', delay_ms: 300 },
  ],
};

it('a run survives its Redis being killed and restarted (AOF) mid-run', async () => {
  const reference = await referenceRun(script, 'blip');
  dir = mkdtempSync(join(tmpdir(), 'ratchet-aof-'));
  redis = await startRedisServer({ appendOnly: true, dir });
  harness = new Harness({ script, redisUrl: redis.url });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'blip' });
  await waitFor(() => harness?.modelCalls().length === 1, 20_000, 'the first model call');
  // Redis dies while the model call is in flight; the reply's commit must wait for it to come back.
  await redis.stop();
  await new Promise((resolve) => setTimeout(resolve, 500));
  redis = await startRedisServer({ appendOnly: true, dir, port: redis.port });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });
  expect(run.status).toBe('completed');
  await expectSameAsReference({ harness, runId, sessionId, kills: 1 }, reference);
});
