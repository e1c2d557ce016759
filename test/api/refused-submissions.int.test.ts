import { afterEach, describe, expect, it } from 'vitest';
import { engineFromConfig } from '../../src/engine/index.js';
import type { RatchetError } from '../../src/errors/index.js';
import { createLogger, silentLogger } from '../../src/log/index.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

// A submission the API refuses (the session already has an active run) must leave nothing behind: no step job
// for the refused run in any state, so no worker later picks up a step whose run was never created.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const everyJobState = [
  'active',
  'wait',
  'waiting-children',
  'prioritized',
  'waiting',
  'delayed',
  'completed',
  'failed',
] as const;

/** The run ids of every step job of the session's shard, in any state. */
async function runIdsWithJobs(harness: ApiHarness, sessionId: string): Promise<string[]> {
  const shard = sessionKeys(harness.harness.engine.space, sessionId).shard;
  const jobs = await harness.harness.engine.queues.queue(shard).getJobs([...everyJobState]);
  return [...new Set(jobs.map((job) => (job.data as { run_id: string }).run_id))].sort();
}

describe('refused submissions', () => {
  it('a 409 session_busy from POST /v1/runs, POST /v1/sessions/:id/messages or MCP submit_task enqueues nothing', async () => {
    // No worker yet: the first run stays queued (the session busy) while the refusals come in.
    api = await ApiHarness.start({ script: { default: { text: 'done' } }, worker: false });
    const harness = api;
    const first = await harness.request('POST', '/v1/runs', { body: { input: 'one' } });
    expect(first.status).toBe(202);
    const sessionId: string = first.body.session_id;

    const viaRuns = await harness.request('POST', '/v1/runs', {
      body: { input: 'two', session_id: sessionId },
    });
    const viaMessages = await harness.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { text: 'three' },
    });
    const client = await connectClient(httpTransport(harness.url));
    const viaMcp = await callTool(client, 'submit_task', { input: 'four', session_id: sessionId }).finally(
      () => client.close(),
    );
    for (const refused of [viaRuns, viaMessages]) {
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({
        code: 'conflict',
        details: { reason: 'session_busy', active_run_id: first.body.run_id },
      });
    }
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.text).toContain('already has an active run');

    expect(await runIdsWithJobs(harness, sessionId)).toEqual([first.body.run_id]);
    const runs = await harness.harness.redis.smembers(
      sessionKeys(harness.harness.engine.space, sessionId).runs,
    );
    expect(runs).toEqual([first.body.run_id]);

    // A worker now finds only the accepted run's steps: none of a run that does not exist.
    const lines: { msg?: string }[] = [];
    await harness.harness.startWorker({
      logger: createLogger({
        level: 'info',
        destination: { write: (line: string) => lines.push(JSON.parse(line)) },
      }),
    });
    const finished = await harness.request('GET', `/v1/runs/${first.body.run_id}/wait?timeout_s=30`);
    expect(finished.body.status).toBe('completed');
    expect(await runIdsWithJobs(harness, sessionId)).toEqual([first.body.run_id]);
    expect(lines.filter((line) => line.msg?.includes('does not exist'))).toEqual([]);
  });

  it('submissions racing from two API processes on one session: one run and one step, every other refused', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'done' } }, worker: false });
    const harness = api.harness;
    // A second engine is what a second API process has: a run writer (and its connection) of its own.
    const other = engineFromConfig({
      config: harness.loaded.config,
      redis: harness.redis,
      logger: silentLogger(),
    });
    try {
      const session = await harness.engine.createSession({ agent: 'agent' });
      const submissions = Array.from({ length: 20 }, (_, index) =>
        (index % 2 === 0 ? harness.engine : other).startRun({ input: `try ${index}`, sessionId: session.id }),
      );
      const outcomes = await Promise.allSettled(submissions);
      const accepted = outcomes.flatMap((outcome) =>
        outcome.status === 'fulfilled' ? [outcome.value.runId] : [],
      );
      const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
      expect(accepted).toHaveLength(1);
      expect(refusals).toHaveLength(19);
      for (const refusal of refusals) expect((refusal as RatchetError).code).toBe('session_busy');
      expect(await runIdsWithJobs(api, session.id)).toEqual(accepted);
    } finally {
      await other.close();
    }
  });
});
