import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { type CliWorld, createWorld, runCli, startServer } from './cli-fixture.js';

// `ratchet signal` and `ratchet events send` as a person types them, against a live API with scoped tokens:
// the run waiting for a signal, then for an event, receives each once (decision 0033).

const waits: Script = {
  replies: [
    { tool_calls: [{ id: 'go', name: 'wait_for_event', arguments: { event: 'go', timeout_s: 120 } }] },
    { tool_calls: [{ id: 'done', name: 'wait_for_event', arguments: { event: 'done', timeout_s: 120 } }] },
    { text: 'all done' },
  ],
};

const operator = 'operator-token-0123456789';
const acme = 'acme-token-0123456789';
let world: CliWorld | undefined;
let server: Awaited<ReturnType<typeof startServer>> | undefined;
afterEach(async () => {
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

async function waitingFor(url: string, runId: string, event: string): Promise<void> {
  await waitFor(
    async () => {
      const response = await fetch(`${url}/v1/runs/${runId}`, {
        headers: { authorization: `Bearer ${acme}` },
      });
      const run = (await response.json()) as { waiting: { event?: string }[] };
      return run.waiting[0]?.event === event;
    },
    20_000,
    `the wait for ${event}`,
  );
}

describe('ratchet signal and ratchet events send', () => {
  it('signal a waiting run, then send the event it waits for next; a tenant token may not send events', async () => {
    world = createWorld({
      script: waits,
      redisUrl: inject('redisUrl'),
      tokens: [operator, { token: acme, tenant: 'acme' }],
      toolboxes: ['waits'],
    });
    server = await startServer(world);
    const url = server.api.url;
    const submitted = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'wait' }),
    });
    const { run_id: runId } = (await submitted.json()) as { run_id: string };
    await waitingFor(url, runId, 'go');

    const bad = await runCli(['signal', runId, 'go', '--payload', '{nope'], { env: { RATCHET_TOKEN: acme } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--payload: not JSON');
    const signalled = await runCli(
      ['signal', runId, 'go', '--payload', '{"n":1}', '--id', 'go-1', '--url', url],
      {
        env: { RATCHET_TOKEN: acme },
      },
    );
    expect(signalled.stderr).toBe('');
    expect(signalled.code).toBe(0);
    expect(signalled.stdout).toBe(`signalled run ${runId} with go (id go-1): 1 waiting step woken\n`);
    const again = await runCli(['signal', runId, 'go', '--id', 'go-1', '--url', url], {
      env: { RATCHET_TOKEN: acme },
    });
    expect(again.stdout).toContain(`already signalled run ${runId}`);
    await waitingFor(url, runId, 'done');

    const scoped = await runCli(['events', 'send', 'done', '--url', url], { env: { RATCHET_TOKEN: acme } });
    expect(scoped.code).toBe(1);
    expect(scoped.stderr).toContain('operator token');
    const sent = await runCli(
      [
        'events',
        'send',
        'done',
        '--payload',
        '{"ok":true}',
        '--id',
        'd-1',
        '--url',
        url,
        '--token',
        operator,
      ],
      {},
    );
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe('sent event done (id d-1): 1 waiting step woken\n');

    await waitFor(
      async () => {
        const response = await fetch(`${url}/v1/runs/${runId}`, {
          headers: { authorization: `Bearer ${acme}` },
        });
        return ((await response.json()) as { status: string }).status === 'completed';
      },
      30_000,
      'the run to complete',
    );
    const usage = await runCli(['events', 'sned', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown action "sned" (did you mean "send"?)');
  });
});
