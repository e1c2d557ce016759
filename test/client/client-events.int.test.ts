import { afterEach, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';

// ratchet/client's sendEvent and signal against the real API, a worker and the real Redis (decision 0033).

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('a run waiting for an event shows the wait, receives a signal, then an event sent with the client', async () => {
  api = await ApiHarness.start({
    script: {
      replies: [
        { tool_calls: [{ id: 'signal', name: 'wait_for_event', arguments: { event: 'go', timeout_s: 60 } }] },
        {
          tool_calls: [{ id: 'event', name: 'wait_for_event', arguments: { event: 'done', timeout_s: 60 } }],
        },
        { text: 'all done' },
      ],
    },
    harness: { agent: { toolboxes: ['waits'] }, worker: { question_recheck_ms: 60_000 } },
  });
  const client = new RatchetClient({ baseUrl: api.url });
  const { run_id: runId } = await client.submit({ input: 'wait' });
  await waitFor(async () => (await client.get(runId)).waiting.length === 1, 20_000, 'the first wait');
  expect((await client.get(runId)).waiting[0]).toMatchObject({ kind: 'event', event: 'go' });

  expect(await client.signal(runId, { event: 'go', payload: { n: 1 }, id: 'go-1' })).toEqual({
    id: 'go-1',
    duplicate: false,
    woken: 1,
  });
  await waitFor(
    async () => (await client.get(runId)).waiting[0]?.event === 'done',
    20_000,
    'the second wait',
  );
  const sent = await client.sendEvent({ event: 'done', payload: { ok: true }, id: 'done-1' });
  expect(sent).toEqual({ id: 'done-1', duplicate: false, woken: 1, runs: [] });
  expect((await client.sendEvent({ event: 'done', id: 'done-1' })).duplicate).toBe(true);
  const finished = await client.wait(runId, { timeoutS: 30 });
  expect(finished.status).toBe('completed');
  expect(finished.waiting).toEqual([]);

  const refused = await client.signal(runId, { event: 'go' }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(RatchetApiError);
  expect((refused as RatchetApiError).status).toBe(409);
});
