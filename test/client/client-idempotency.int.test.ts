import { afterEach, describe, expect, it } from 'vitest';
import { RatchetApiError, RatchetClient } from '../../src/client/index.js';
import { ApiHarness } from '../api/api-harness.js';

// ratchet/client's idempotent submission (decision 0035), as docs/client.md shows it, against the real API.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('client: submitting once', () => {
  it('submit and send with an idempotencyKey answer the first run again, and a reused key throws 422', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'done' } } });
    const client = new RatchetClient({ baseUrl: api.url });
    const key = 'report-2026-12-06';
    const accepted = await client.submit({ input: 'Write the daily report' }, { idempotencyKey: key });
    expect(accepted.replayed).toBeUndefined();
    const again = await client.submit({ input: 'Write the daily report' }, { idempotencyKey: key });
    expect(again).toEqual({ ...accepted, replayed: true });
    const refused = await client
      .submit({ input: 'Write the weekly report' }, { idempotencyKey: key })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RatchetApiError);
    expect(refused).toMatchObject({ status: 422, code: 'unprocessable' });

    await client.wait(accepted.run_id, { timeoutS: 20 });
    const sent = await client.send(accepted.session_id, { text: 'and a summary' }, { idempotencyKey: 'm-1' });
    const resent = await client.send(
      accepted.session_id,
      { text: 'and a summary' },
      { idempotencyKey: 'm-1' },
    );
    expect(resent).toEqual({ ...sent, replayed: true });
    expect(sent.run_id).not.toBe(accepted.run_id);
  });
});
