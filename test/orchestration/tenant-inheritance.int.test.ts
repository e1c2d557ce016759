import { afterEach, describe, expect, it } from 'vitest';
import { runKeys } from '../../src/redis/keys.js';
import { Harness } from '../helpers/harness.js';

/** A run's tenant and priority (decision 0035): recorded on submit, carried by its children, retries and forks. */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, arguments: args }] });

describe('tenants of runs', () => {
  it("a child run carries its root's tenant and priority; a fork and its session keep them", async () => {
    const h = new Harness({
      agents: [
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'the helper says hi' } }],
            replies: [call('delegate_to_agent', { agent: 'helper', task: 'say hi' })],
          },
        },
        { name: 'helper', script: { default: { text: 'hi' } } },
      ],
    });
    harness = h;
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'go', tenant: 'acme', priority: 8 });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const root = await h.engine.getRun(runId);
    expect(root).toMatchObject({ tenant: 'acme', priority: 8 });
    expect(await h.engine.getSession(sessionId)).toMatchObject({ tenant: 'acme' });
    const childIds = await h.redis.smembers(runKeys(h.engine.space, sessionId, runId).children);
    expect(childIds).toHaveLength(1);
    expect(await h.engine.getRun(childIds[0] ?? '')).toMatchObject({
      agent: 'helper',
      tenant: 'acme',
      priority: 8,
      parent: { run_id: runId },
    });
    // A message on the session is the session's tenant's, whoever sends it without naming one.
    const next = await h.engine.startRun({ input: 'again', sessionId });
    expect(await h.engine.getRun(next.runId)).toMatchObject({ tenant: 'acme', priority: 5 });
    await h.engine.waitForRun(next.runId, { timeoutMs: 20_000 });
    // Naming another tenant for the session finds no such session.
    await expect(h.engine.startRun({ input: 'x', sessionId, tenant: 'globex' })).rejects.toMatchObject({
      code: 'session_not_found',
    });
    const fork = await h.engine.forkRun(runId, { atIteration: 1 });
    expect(await h.engine.getRun(fork.runId)).toMatchObject({ tenant: 'acme', priority: 8 });
    expect(await h.engine.getSession(fork.sessionId)).toMatchObject({ tenant: 'acme' });
  });

  it('defaults to tenant default and priority 5; refuses a bad tenant name or priority naming the field', async () => {
    const h = new Harness({ script: { default: { text: 'done' } } });
    harness = h;
    const { runId } = await h.engine.startRun({ input: 'x' });
    expect(await h.engine.getRun(runId)).toMatchObject({ tenant: 'default', priority: 5 });
    await expect(h.engine.startRun({ input: 'x', tenant: 'Not A Tenant' })).rejects.toMatchObject({
      code: 'invalid_run_settings',
      details: { field: 'tenant' },
    });
    await expect(h.engine.startRun({ input: 'x', tenant: 'a'.repeat(65) })).rejects.toMatchObject({
      details: { field: 'tenant' },
    });
    for (const priority of [0, 11, 2.5]) {
      await expect(h.engine.startRun({ input: 'x', priority })).rejects.toMatchObject({
        code: 'invalid_run_settings',
        details: { field: 'priority' },
      });
    }
  });
});
