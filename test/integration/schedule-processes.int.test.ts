import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnNodeProcess, type WorkerProcess } from '../../src/testing/worker-process.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';
import { scheduledRuns } from '../helpers/scheduled-runs.js';

// The case (decision 0036): a config schedule firing every second for 30 s, with three worker
// processes and two API processes (each syncing the config's schedules as it starts), one worker SIGKILLed
// meanwhile, starts one run per fire: 30 runs (±1 at the edges), no fire time twice, none skipped.
const repoRoot = resolve(import.meta.dirname, '../..');
let harness: Harness | undefined;
const apis: WorkerProcess[] = [];
afterEach(async () => {
  await Promise.allSettled(apis.splice(0).map((api) => api.kill()));
  await harness?.close();
  harness = undefined;
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

describe('a schedule on many processes', () => {
  it('fires every second for 30 s on 3 workers and 2 APIs, one worker SIGKILLed: one run per fire', async () => {
    const h = new Harness({
      script: { replies: [{ text: 'beat' }] },
      // `ratchet api` knows only the built-in toolboxes, not the test ones.
      agent: { toolboxes: [] },
      config: {
        schedules: [{ id: 'heartbeat', every_s: 1, agent: 'agent', input: 'beat', overlap: 'allow' }],
      },
    });
    harness = h;
    const workers = [h.spawnWorker(), h.spawnWorker(), h.spawnWorker()];
    const ports = [await freePort(), await freePort()];
    for (const port of ports) {
      apis.push(
        spawnNodeProcess({
          args: [
            '--import',
            'tsx',
            join(repoRoot, 'src/cli/main.ts'),
            'api',
            '--config',
            h.configPath,
            '--port',
            String(port),
          ],
          cwd: repoRoot,
          env: { ...process.env, RATCHET_LOG_LEVEL: 'info', RATCHET_CRASH_AT: '' },
        }),
      );
    }
    await waitFor(
      () => workers.every((worker) => worker.output().includes('worker started')),
      120_000,
      'the workers to start',
    );
    for (const port of ports) {
      await waitFor(
        async () => {
          const ended = apis.find((api) => api.child.exitCode !== null || api.child.signalCode !== null);
          if (ended) throw new Error(`an API process ended:\n${ended.output()}`);
          const answer = await fetch(`http://127.0.0.1:${port}/v1/schedules`).catch(() => undefined);
          if (!answer?.ok) return false;
          const body = (await answer.json()) as { schedules: { id: string; next_fire_at: string | null }[] };
          return body.schedules.some(
            (schedule) => schedule.id === 'heartbeat' && schedule.next_fire_at !== null,
          );
        },
        120_000,
        `the API on port ${port}`,
      );
    }
    // Every process is up and has synced the config: 30 s of fires from here.
    const from = Date.now();
    await sleep(10_000);
    await workers[0]?.kill();
    await sleep(20_000);
    const paused = await h.engine.schedules().setPaused('heartbeat', true);
    const to = Date.parse(paused.record.updated_at);
    expect(paused.nextFireAt).toBeUndefined();
    // A fire the killed worker held is taken over once its lock lapses (2 s in tests).
    await sleep(6_000);

    const runs = (await scheduledRuns(h.redis, h.prefix)).filter(
      (run) => Date.parse(run.fireAt) >= from && Date.parse(run.fireAt) < to,
    );
    const fireTimes = runs.map((run) => Date.parse(run.fireAt));
    expect(new Set(fireTimes).size, 'a fire time started two runs').toBe(fireTimes.length);
    expect(runs.length).toBeGreaterThanOrEqual(29);
    expect(runs.length).toBeLessThanOrEqual(31);
    for (let index = 1; index < fireTimes.length; index += 1) {
      expect((fireTimes[index] ?? 0) - (fireTimes[index - 1] ?? 0), 'a fire was skipped').toBe(1000);
    }
    // Every fire of the window is recorded as a run, none as skipped.
    const fires = (await h.engine.schedules().recentFires('heartbeat', 200)).filter(
      (fire) => fire.fireAtMs >= from && fire.fireAtMs < to,
    );
    expect(fires.map((fire) => fire.decision.kind).sort()).toEqual(runs.map(() => 'run'));
    // The runs ran: each was taken up by a worker and completed.
    for (const run of runs) {
      const done = await h.engine.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('completed');
    }
  }, 300_000);
});
